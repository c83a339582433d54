import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { gqlData } from '../../../plugins/graphql/helpers.ts';
import { demandTargets, streamOf } from '../../../../core/process/demand/targets.ts';
import { DemandMatcher, demandKey } from '../../../../core/process/demand/door-tap.ts';
import type { FilesystemService } from '../../../../sdk/index.ts';
import { state } from '../helpers.ts';
import { hlsProcess } from './helpers.ts';

/*
 * The `ondemand` field through the API: validated by the body schema, listed by swagger and
 * GraphQL, the camera wall sample accepted (waiting, its waiting playlists up, nothing running);
 * and what an output address names for demand (playlists, segments, stream names).
 */

t.test('the field is validated and listed by swagger and GraphQL', async (t) => {
  const app = await startApp(t, { config: { plugins: ['graphql', 'memfs'] } });
  for (const bad of [{ idle_seconds: -1 }, { idle_seconds: 86_401 }, { enable: 'yes' }]) {
    const r = await app.request('POST', '/api/v3/process', { body: hlsProcess('bad', 'bad', { ondemand: bad }) });
    t.equal(r.status, 400, `refused: ${JSON.stringify(bad)}`);
    t.match(JSON.stringify(r.body), /ondemand/);
  }
  t.equal((await app.request('POST', '/api/v3/process', { body: hlsProcess('g1', 'g1') })).status, 200);
  const put = await app.request('PUT', '/api/v3/process/g1', { body: { ondemand: { enable: true, idle_seconds: 7 } } });
  t.equal(put.status, 200);
  t.same((await app.request('GET', '/api/v3/process/g1/config')).body.ondemand, { enable: true, idle_seconds: 7 });
  await waitFor(async () => (await state(app, 'g1')).ondemand?.waiting, { what: 'waiting' });
  const data = await gqlData(app, '{ process(id: "g1") { config { ondemand { enable idle_seconds } } state { ondemand { waiting readers idle_seconds } } } }');
  t.same(data.process, { config: { ondemand: { enable: true, idle_seconds: 7 } }, state: { ondemand: { waiting: true, readers: 0, idle_seconds: 7 } } });
  const doc = JSON.stringify((await app.request('GET', '/api/swagger/json')).body);
  for (const f of ['ondemand', 'idle_seconds', 'stop_at', 'started_by']) t.ok(doc.includes(`"${f}"`), `swagger lists ${f}`);
});

t.test('the camera wall sample is accepted and waits for viewers', async (t) => {
  const app = await startApp(t);
  const file = fileURLToPath(new URL('../../../../sample-config/processes/camera-wall-ondemand.json', import.meta.url));
  const cams = JSON.parse(readFileSync(file, 'utf8')) as Array<{ id: string }>;
  for (const c of cams) t.equal((await app.request('POST', '/api/v3/process', { body: c })).status, 200, `${c.id} accepted`);
  for (const [i, c] of cams.entries()) {
    const s = await waitFor(async () => { const x = await state(app, c.id); return x.ondemand?.waiting ? x : undefined; }, { what: `${c.id} waiting` });
    t.equal(s.exec, 'finished', `${c.id} does not run`);
    t.equal(s.ondemand.idle_seconds, i < 3 ? 30 : 120);
    // the API's file routes are no demand: they read the waiting playlist without starting the camera
    const pl = await waitFor(async () => { const r = await app.request('GET', `/api/v3/fs/mem/wall/cam${i + 1}.m3u8`); return r.status === 200 ? r.text : undefined; }, { what: 'waiting playlist' });
    t.match(pl, /on demand: waiting/);
  }
  t.equal((await state(app, cams[0]!.id)).exec, 'finished', 'still not running');
});

t.test('what an output names for demand', async (t) => {
  const mem = { name: 'mem', mount: '/memfs', publicMount: {} } as unknown as FilesystemService;
  const disk = { name: 'disk', mount: '/', root: '/data/disk', publicMount: {} } as unknown as FilesystemService;
  const fss = [disk, mem];
  const opts = ['-f', 'hls', '-hls_segment_filename', 'http://127.0.0.1:8080/memfs/live/a_%04d.ts'];
  const m = demandTargets([{ id: 'o', address: 'http://127.0.0.1:8080/memfs/live/a.m3u8', options: opts, cleanup: [] }], fss);
  t.equal(m.hls[0]!.playlist, '/live/a.m3u8');
  t.equal(m.hls[0]!.mount, '/memfs');
  t.ok(m.hls[0]!.segments.test('a_0001.ts') && !m.hls[0]!.segments.test('b_0001.ts'));
  const d = demandTargets([{ id: 'o', address: '/data/disk/x/cam.m3u8', options: [], cleanup: [] }], fss);
  t.match(d.hls[0], { mount: '/', playlist: '/x/cam.m3u8', dir: '/x' });
  t.ok(d.hls[0]!.segments.test('cam12.ts'), 'ffmpeg\'s default segment names');
  const tee = demandTargets([{ id: 'o', address: '[f=hls]http://h/memfs/t.m3u8|[f=flv]rtmp://h:1935/live/t', options: [], cleanup: [] }], fss);
  t.same([tee.hls[0]!.playlist, tee.streams], ['/t.m3u8', ['live/t']], 'both parts of a tee');
  t.equal(streamOf('rtmp://localhost:1935/cam?token=x'), 'cam');
  t.equal(streamOf('srt://localhost:6000?mode=caller&streamid=cam5,mode:publish,token:abc'), 'cam5');
  t.equal(streamOf('srt://localhost:6000?streamid=#!::r=live/cam6,m=publish'), 'live/cam6');
  t.equal(streamOf('http://h/memfs/x.m3u8'), undefined);
  const matcher = new DemandMatcher();
  matcher.load({ t: 'table', playlists: [[demandKey('/memfs', '/live/a.m3u8'), 'p1']], segments: [[demandKey('/memfs', '/live'), m.hls[0]!.segments.source, 'p1']] });
  t.same(['/live/a.m3u8', '/live/a_0003.ts', '/live/b.m3u8', '/a_0001.ts'].map((p) => matcher.match('/memfs', p)), ['p1', 'p1', undefined, undefined]);
  // `%d%d` makes `\d+\d+`: a viewer's name of many digits took seconds with a backtracking RegExp
  const twice = demandTargets([{ id: 'o', address: '/data/disk/s/i.m3u8', options: ['-hls_segment_filename', '/data/disk/s/seg%d%d.ts'], cleanup: [] }], fss);
  const m2 = new DemandMatcher();
  m2.load({ t: 'table', playlists: [], segments: [[demandKey('/', '/s'), twice.hls[0]!.segments.source, 'p2']] });
  t.equal(m2.match('/', '/s/seg12.ts'), 'p2');
  t.equal(m2.match('/', `/s/seg${'1'.repeat(200)}x`), undefined, 'at once');
  t.equal(m2.match('/', `/s/seg${'1'.repeat(100_000)}.ts`), undefined, 'no name over 255 characters is a segment');
});
