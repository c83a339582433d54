import t from 'tap';
import { RunCredentialTable } from '../../../core/process/run-credentials.ts';
import { runWriteScope, runWriteVerdict } from '../../../core/door/run-writes.ts';
import { runMayStream } from '../../../plugins/rtmp/run-scope.ts';
import { runSrtGrants, srtRuns, runPassphrase } from '../../../plugins/srt/run-scope.ts';
import { runUserinfo, type RunField } from '../../../sdk/index.ts';

/*
 * Issue 43.4, the pure parts: the registry of run credentials, and what a run's command lets its
 * token do at the file door, the RTMP server and the SRT server.
 */

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

t.test('the registry: a token per run, found while it lives, never after; watchers told of binds and revokes', async (t) => {
  const errors: unknown[] = [];
  const runs = new RunCredentialTable((err) => errors.push(err));
  let told = 0;
  const stop = runs.watch(() => { told++; });
  runs.watch(() => { throw new Error('a bad watcher'); });
  const a = runs.issue('a');
  const b = runs.issue('a');
  t.match(a.token, /^[A-Za-z0-9_-]{32}$/);
  t.not(a.token, b.token, 'every run its own');
  t.same(runs.live(), [], 'not live before it is bound');
  a.bind([{ section: 'output', text: `x${a.token}` }]);
  t.equal(told, 1);
  t.same(errors.length, 1, 'a throwing watcher is reported, the others told');
  t.same(runs.find(a.token), { processId: 'a', token: a.token, fields: [{ section: 'output', text: `x${a.token}` }] });
  t.equal(runs.live().length, 1);
  for (const bad of ['', 'x', a.token.slice(1), `${a.token}=`, a.token.toUpperCase() === a.token ? 'y'.repeat(32) : a.token.toUpperCase()]) {
    t.equal(runs.find(bad), undefined, `not ${JSON.stringify(bad)}`);
  }
  a.revoke();
  a.revoke();
  a.bind([{ section: 'output', text: 'again' }]);
  t.equal(runs.find(a.token), undefined, 'revoked: unknown, and a late bind does not bring it back');
  t.equal(told, 2, 'told once for the revoke');
  b.revoke();
  t.equal(told, 2, 'a run never bound changes nothing anyone knew');
  stop();
  t.equal(runs.size, 0);
});

t.test('file writes: the paths its command names after its credential, with ffmpeg\'s patterns and the playlist\'s own files', async (t) => {
  const runs = new RunCredentialTable();
  const run = runs.issue('restreamer-ui:ingest:1');
  const url = `http://${runUserinfo(run)}127.0.0.1:8080/memfs`;
  const esc = url.replace(/:/g, '\\\\:');
  const fields: RunField[] = [
    { section: 'global', text: '-y' },
    { section: 'output', text: '-hls_fmp4_init_filename' },
    { section: 'output', text: 'init_cam.mp4' },
    { section: 'output', text: `[f=hls:hls_segment_filename=${esc}/live/cam_%04d.ts:method=PUT]${url}/live/cam.m3u8|[f=flv]rtmp://h/x` },
    { section: 'output', text: `${url}/dash/d.mpd` },
    { section: 'output', text: `${url}/snap/%Y-%m-%d_%H%M%S.jpg` },
    { section: 'output', text: 'http://other:pw@127.0.0.1:8080/memfs/not-mine.m3u8' },
    // an input is read, never written (`-method PUT -post_data` on an input overwrote another's playlist)
    { section: 'input', text: '-method' },
    { section: 'input', text: 'PUT' },
    { section: 'input', text: `${url}/public/index.m3u8` },
  ];
  run.bind(fields);
  const scope = runWriteScope(runs.find(run.token)!);
  const may = (p: string) => scope.some((re) => re.test(p));
  for (const p of ['/memfs/live/cam.m3u8', '/memfs/live/cam_0001.ts', '/memfs/live/cam_123456.ts', '/memfs/live/cam.m3u8.tmp', '/memfs/live/cam0.ts',
    '/memfs/live/init_cam.mp4', '/memfs/dash/d.mpd', '/memfs/dash/init-stream0.m4s', '/memfs/dash/chunk-stream0-00001.m4s', '/memfs/snap/2026-01-02_030405.jpg']) {
    t.ok(may(p), p);
  }
  for (const p of ['/memfs/live/other.m3u8', '/memfs/live/cam2.m3u8', '/memfs/cam.m3u8', '/memfs/live/sub/cam_0001.ts', '/memfs/not-mine.m3u8',
    '/memfs/snap/x/y.jpg', '/disk/live/cam.m3u8', '/memfs/dash/other.mpd', '/memfs/public/index.m3u8', '/memfs/public/index_evil.ts']) {
    t.notOk(may(p), `not ${p}`);
  }
  const auth = basic('process', `restreamer-ui:ingest:1:${run.token}`);
  t.equal(runWriteVerdict(runs, auth, '/memfs/live/cam_0002.ts'), 'ok');
  t.match(runWriteVerdict(runs, auth, '/memfs/live/other.ts'), { status: 403, errorCode: 'FS_RUN_SCOPE' });
  t.equal(runWriteVerdict(runs, basic('process', `someone-else:${run.token}`), '/memfs/live/cam.m3u8'), undefined, 'another id: not this run');
  t.equal(runWriteVerdict(runs, basic('admin', run.token), '/memfs/live/cam.m3u8'), undefined, 'not the run user: the mount decides');
  t.equal(runWriteVerdict(runs, 'Bearer x', '/memfs/live/cam.m3u8'), undefined);
  t.equal(runWriteVerdict(undefined, auth, '/memfs/live/cam.m3u8'), undefined);
  run.revoke();
  t.equal(runWriteVerdict(runs, auth, '/memfs/live/cam.m3u8'), undefined, 'an ended run is no run (its value was asked before: not kept past the revoke)');
  t.equal(runWriteVerdict(runs, auth, '/memfs/live/cam.m3u8'), undefined, 'and again');
  // a run asked of before its bind names nothing, and what it names at once after
  const later = runs.issue('p2');
  const lauth = basic('process', `p2:${later.token}`);
  t.match(runWriteVerdict(runs, lauth, '/memfs/p2.m3u8'), { status: 403, errorCode: 'FS_RUN_SCOPE' }, 'not bound yet: names nothing');
  later.bind([{ section: 'output', text: `http://${runUserinfo(later)}127.0.0.1:8080/memfs/p2.m3u8` }]);
  t.equal(runWriteVerdict(runs, lauth, '/memfs/p2.m3u8'), 'ok', 'bound: what it names');
  later.revoke();
  t.equal(runWriteVerdict(runs, lauth, '/memfs/p2.m3u8'), undefined, 'revoked: no run');
});

t.test('streams: RTMP publishes its outputs and plays its inputs; SRT by the streamid\'s mode', async (t) => {
  const runs = new RunCredentialTable();
  const run = runs.issue('p');
  const tk = run.token;
  run.bind([
    { section: 'input', text: `rtmp://127.0.0.1:1935/live/in.stream?token=${tk}` },
    { section: 'input', text: `srt://127.0.0.1:6000?mode=caller&streamid=src,mode:request,token:${tk}&passphrase=${runPassphrase(tk)}` },
    { section: 'output', text: `[f=flv]rtmp://127.0.0.1:1935//out.stream?token=${tk}|[f=mpegts]srt://127.0.0.1:6000?mode=caller&streamid=dst,mode:publish,token:${tk}` },
    { section: 'output', text: 'rtmp://127.0.0.1:1935/foreign?token=another' },
  ]);
  const g = runs.find(tk)!;
  t.ok(runMayStream(g, '/out.stream', 'publish'));
  t.ok(runMayStream(g, '/live/in.stream', 'play'));
  t.notOk(runMayStream(g, '/live/in.stream', 'publish'), 'an input is not published');
  t.notOk(runMayStream(g, '/out.stream', 'play'), 'an output is not played');
  t.notOk(runMayStream(g, '/foreign', 'publish'), 'a URL with another token');
  t.same(runSrtGrants(g).sort(), ['publish dst', 'request src']);
  t.same(srtRuns(runs.live()), [{ token: tk, passphrase: runPassphrase(tk), grants: runSrtGrants(g) }]);
  t.match(runPassphrase(tk), /^[\w-]{32}$/);
  t.not(runPassphrase(tk), tk);
  const other = runs.issue('q');
  other.bind([{ section: 'output', text: `${runUserinfo(other)}` }]);
  t.equal(srtRuns(runs.live()).length, 1, 'a run without {srt} is not pushed to the SRT host');
});

t.test('describers: what runs name at each listener, a failing reading names what no policy allows', async (t) => {
  const errors: unknown[] = [];
  const runs = new RunCredentialTable((err) => errors.push(err));
  const grant = { processId: 'p', token: 'x'.repeat(32), fields: [] };
  t.same(runs.uses(grant), [], 'nobody described: nothing');
  const stop = runs.describe(() => [{ type: 'rtmp', resource: 'live/a', action: 'PUBLISH' }]);
  runs.describe(() => { throw new Error('a bad reading'); });
  t.same(runs.uses(grant), [{ type: 'rtmp', resource: 'live/a', action: 'PUBLISH' }, { type: 'unreadable', resource: 'p', action: 'DESCRIBE' }]);
  t.equal(errors.length, 1, 'reported');
  stop();
  t.same(runs.uses(grant).map((u) => u.type), ['unreadable'], 'removed');
});

t.test('file reads: the paths a run names (any section), and below its playlists\' and patterns\' folders', async (t) => {
  const { runMayRead } = await import('../../../sdk/index.ts');
  const runs = new RunCredentialTable();
  const run = runs.issue('p');
  const url = `http://${runUserinfo(run)}127.0.0.1:8080`;
  run.bind([
    { section: 'input', text: `${url}/memfs/alice/in.m3u8` },
    { section: 'input', text: `${url}/memfs/alice/logo.png` },
    { section: 'input', text: `${url}/memfs/snaps/img_%03d.jpg` },
    { section: 'output', text: `${url}/memfs/alice/out/x.m3u8` },
  ]);
  const grant = runs.find(run.token)!;
  for (const p of ['/memfs/alice/in.m3u8', '/memfs/alice/in_001.ts', '/memfs/alice/sub/v1.m3u8', '/memfs/alice/logo.png', '/memfs/snaps/img_001.jpg', '/memfs/alice/out/x.m3u8']) {
    t.ok(runMayRead(grant, p), p);
  }
  for (const p of ['/memfs/bob/priv.ts', '/memfs/alicex/in.m3u8', '/memfs/other.png', '/memfs/logo.png', '/disk/alice/in.m3u8']) {
    t.notOk(runMayRead(grant, p), `not ${p} (a playlist naming ../bob/priv.ts leads out of its folder)`);
  }
});
