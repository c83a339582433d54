import t from 'tap';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request, startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import * as srt from '../srt/srt-helpers.ts';

/*
 * A process does what its maker may (issue 49): its run's credential reaches the service's
 * listeners (a memfs write, an RTMP or SRT stream) and its child writes the disk, so an IAM
 * user's process may name there only what that user's own policies allow: alice's process may
 * not publish bob's stream, play his camera, overwrite his memfs files or his disk folder, by
 * address or by option, at create or at update. The superuser's processes as before.
 */

const JWT = 'iam-authority-jwt-secret-0123456789abc';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const alice = {
  name: 'alice', auth: { api: { userpass: { enable: true, password: 'alice password' } } },
  policies: [
    { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['GET', 'POST', 'PUT', 'DELETE'] },
    { types: ['process'], resource: 'alice-*', actions: ['read', 'write', 'command'] },
    { types: ['fs'], resource: '/memfs/alice/**', actions: ['GET', 'PUT', 'DELETE'] },
    { types: ['fs'], resource: '/alice/**', actions: ['GET', 'PUT'] },
    { types: ['rtmp', 'srt'], resource: 'alice/**', actions: ['PLAY', 'PUBLISH'] },
  ],
};
const proc = (id: string, o: { input?: string; inputOptions?: string[]; output?: string; options?: string[] }) => ({
  id, autostart: false,
  input: [{ id: 'in', address: o.input ?? 'testsrc2=size=160x120:rate=10', options: o.inputOptions ?? (o.input ? [] : ['-f', 'lavfi']) }],
  output: [{ id: 'out', address: o.output ?? '-', options: o.options ?? ['-f', 'null'] }],
});

t.test('an IAM user\'s process names only what its user may do, by address or option, at create and update', async (t) => {
  const app = await startApp(t, {
    config: {
      api: API, iam: { enable: true },
      rtmp: { enable: true, address: '127.0.0.1:0', token: 'rtmp-global' },
      srt: { enable: true, address: '127.0.0.1:0', token: srt.TOKEN, passphrase: srt.PASS },
      storage: { memory: { auth: { enable: true, username: 'mem', password: 'mem-pw' } } },
    },
  });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200);
  const anon = [{ types: ['fs'], resource: '/memfs/public/**', actions: ['GET'] }];
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: anon, token: admin })).status, 200);
  const token = await login('alice', 'alice password');
  const disk = join(app.dir, 'disk');

  const refused: Array<[string, ReturnType<typeof proc> & { options?: string[] }]> = [
    ['publishes another user\'s RTMP stream', proc('alice-1', { output: '{rtmp,name=bob/live}', options: ['-f', 'flv'] })],
    ['plays another user\'s RTMP stream', proc('alice-2', { input: '{rtmp,name=bob/cam}' })],
    ['publishes another user\'s SRT stream', proc('alice-3', { output: '{srt,name=bob/live}', options: ['-f', 'mpegts'] })],
    ['plays another user\'s SRT stream', proc('alice-4', { input: '{srt,name=bob/cam}' })],
    ['writes another user\'s memfs files', proc('alice-5', { output: '{memfs}/bob/index.m3u8', options: ['-f', 'hls'] })],
    ['reads them', proc('alice-6', { input: '{memfs}/bob/index.m3u8' })],
    ['writes them through an option', proc('alice-7', { output: '{memfs}/alice/index.m3u8', options: ['-f', 'hls', '-hls_segment_filename', '{memfs}/bob/seg_%04d.ts'] })],
    ['climbs out of its folder', proc('alice-8', { output: '{memfs}/alice/../bob/index.m3u8', options: ['-f', 'hls'] })],
    ['climbs out through an escape', proc('alice-9', { output: '{memfs}/alice/%2e%2e/bob/index.m3u8', options: ['-f', 'hls'] })],
    ['writes another user\'s disk folder', proc('alice-10', { output: '{diskfs}/bob/x.mp4', options: ['-f', 'mp4'] })],
    ['writes it by its path', proc('alice-11', { output: join(disk, 'bob', 'x.mp4'), options: ['-f', 'mp4'] })],
    ['writes it in a tee', proc('alice-12', { output: `[f=mp4]{diskfs}/alice/a.mp4|[f=flv]{rtmp,name=bob/live}`, options: ['-f', 'tee', '-map', '0'] })],
    ['writes the disk root', proc('alice-13', { output: '{diskfs}/x.mp4', options: ['-f', 'mp4'] })],
    // the disk's folder named behind a protocol prefix or in an option's value
    ['writes it through tee:', proc('alice-14', { output: 'tee:{diskfs}/bob/evil.ts', options: ['-f', 'mpegts'] })],
    ['writes it through md5:', proc('alice-15', { output: 'md5:{diskfs}/bob/evil.md5', options: ['-f', 'mpegts'] })],
    ['writes it through an option\'s file:', proc('alice-16', { output: '{diskfs}/alice/z.m3u8', options: ['-f', 'hls', '-hls_segment_filename', 'file:{diskfs}/bob/seg_%03d.ts'] })],
    ['writes it through a global option', { ...proc('alice-17', {}), options: ['-progress', 'file:{diskfs}/bob/progress.txt'] }],
    ['reads it through concat:', proc('alice-18', { input: 'concat:{diskfs}/bob/a.ts|{diskfs}/alice/b.ts', inputOptions: [] })],
    ['writes it through a doubled slash', proc('alice-19', { output: '{diskfs}/alice/h.m3u8', options: ['-f', 'hls', '-hls_segment_filename', `${disk.replace(/\/disk$/, '//disk')}/bob/s%d.ts`] })],
    ['writes it through /proc/self/cwd', proc('alice-20', { output: 'tee:/proc/self/cwd/../disk/bob/t.ts', options: ['-f', 'mpegts'] })],
    ['reads what a playlist names through a widened protocol list', proc('alice-21', { input: '{memfs}/alice/pl.m3u8', inputOptions: ['-protocol_whitelist', 'http,tcp,file'] })],
  ];
  for (const [what, body] of refused) {
    const r = await app.request('POST', '/api/v3/process', { body, token });
    t.equal(r.status, 403, `${what}: ${r.text}`);
    t.match(r.body, { code: 403, message: 'Forbidden', details: [/^the process may not (PUT|GET|PLAY|PUBLISH) (fs|rtmp|srt) /] }, what);
  }
  const list = await app.request('GET', '/api/v3/process', { token: admin });
  t.same(list.body, [], 'nothing was made');

  const allowed: Array<[string, ReturnType<typeof proc>]> = [
    ['its own RTMP stream', proc('alice-a', { input: '{rtmp,name=alice/cam}', output: '{rtmp,name=alice/live}', options: ['-f', 'flv'] })],
    ['its own SRT stream', proc('alice-b', { input: '{srt,name=alice/cam}', output: '{srt,name=alice/live}', options: ['-f', 'mpegts'] })],
    ['its own memfs files', proc('alice-c', { output: '{memfs}/alice/index.m3u8', options: ['-f', 'hls', '-hls_segment_filename', '{memfs}/alice/seg_%04d.ts'] })],
    ['its own disk folder', proc('alice-d', { output: `[f=mp4]{diskfs}/alice/a.mp4|[f=flv]{rtmp,name=alice/live}`, options: ['-f', 'tee', '-map', '0'] })],
    ['a test source into the null muxer', proc('alice-e', {})],
    ['a memfs file anyone may read ($anon\'s policies)', proc('alice-f', { input: '{memfs}/public/index.m3u8' })],
  ];
  for (const [what, body] of allowed) {
    const r = await app.request('POST', '/api/v3/process', { body, token });
    t.equal(r.status, 200, `${what}: ${r.text}`);
  }

  const put = await app.request('PUT', '/api/v3/process/alice-c', { body: proc('alice-c', { output: '{memfs}/bob/index.m3u8', options: ['-f', 'hls'] }), token });
  t.equal(put.status, 403, 'an update too');
  const kept = await app.request('GET', '/api/v3/process/alice-c/config', { token });
  t.equal(kept.body.output[0].address, '{memfs}/alice/index.m3u8', 'the stored process is left as it was');

  for (const [what, body] of refused) {
    const r = await app.request('POST', '/api/v3/process', { body: { ...body, id: body.id.replace('alice', 'admin') }, token: admin });
    t.equal(r.status, 200, `the superuser's process ${what}`);
  }
});

t.test('a playlist\'s disk items need its maker\'s read: a process plays them, the store probes them', async (t) => {
  const { portRange } = await import('../playout/helpers.ts');
  const { makeClip } = await import('../playout/playlist/media.ts');
  const [min, max] = await portRange(4);
  const app = await startApp(t, { config: { api: API, iam: { enable: true }, playout: { enable: true, min_port: min, max_port: max } } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  const carol = {
    name: 'carol', auth: { api: { userpass: { enable: true, password: 'carol password' } } },
    policies: [
      { types: ['api'], resource: '/api/v3/playlist{,/**}', actions: ['GET', 'PUT', 'DELETE'] },
      { types: ['fs'], resource: '/carol/**', actions: ['GET'] },
    ],
  };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: carol, token: admin })).status, 200);
  // (by default anyone reads every public mount, the disk too: then so may anyone's playlist)
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: [], token: admin })).status, 200);
  const token = await login('carol', 'carol password');
  const disk = join(app.dir, 'disk');
  await makeClip(join(disk, 'bob'), 'private.mp4', 1);
  await makeClip(join(disk, 'carol'), 'mine.mp4', 1);
  for (const source of ['/bob/private.mp4', 'bob/private.mp4', '/carol/../bob/private.mp4']) {
    const r = await app.request('PUT', '/api/v3/playlist/carol-pl', { body: { items: [{ source }] }, token });
    t.equal(r.status, 403, `${source}: refused`);
    t.match(r.body, { code: 403, details: [/GET fs \/bob\/private\.mp4/] });
  }
  // a playlist file of her own naming his: the names it leads to need her read too
  await writeFile(join(disk, 'carol', 'evil.m3u8'), '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1,\n../bob/private.mp4\n#EXT-X-ENDLIST\n');
  const led = await app.request('PUT', '/api/v3/playlist/carol-pl', { body: { items: [{ source: '/carol/evil.m3u8' }] }, token });
  t.equal(led.status, 400, 'a playlist of hers naming his file');
  t.match(JSON.stringify(led.body), /its maker may not read it/);
  const ok = await app.request('PUT', '/api/v3/playlist/carol-pl', { body: { items: [{ source: '/carol/mine.mp4' }, { source: 'https://example.invalid/x.mp4' }] }, token });
  t.equal(ok.status, 200, ok.text.slice(0, 200));
  t.equal((await app.request('PUT', '/api/v3/playlist/admin-pl', { body: { items: [{ source: '/bob/private.mp4' }] }, token: admin })).status, 200, 'the superuser\'s as before');

  // a process of hers plays only a playlist whose disk items she may read: the superuser's names his file
  const process = { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['GET', 'POST', 'PUT', 'DELETE'] };
  const mine = { types: ['process'], resource: 'carol-*', actions: ['read', 'write', 'command'] };
  t.equal((await app.request('PUT', '/api/v3/iam/user/carol/policy', { body: [...carol.policies, process, mine], token: admin })).status, 200);
  const player = (id: string, list: string) => ({ id, autostart: false, input: [{ id: 'in', address: `playlist:${list}`, options: [] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] });
  const theirs = await app.request('POST', '/api/v3/process', { body: player('carol-1', 'admin-pl'), token });
  t.equal(theirs.status, 403, `another's playlist naming a file she may not read: ${theirs.text.slice(0, 200)}`);
  t.match(theirs.body, { details: [/the process may not GET fs \/bob\/private\.mp4/] });
  t.equal((await app.request('POST', '/api/v3/process', { body: player('carol-2', 'carol-pl'), token })).status, 200, 'her own playlist');
  // the superuser's playlist changed to name his file: her process may not start it (asked again at each start)
  t.equal((await app.request('PUT', '/api/v3/playlist/carol-pl', { body: { items: [{ source: '/bob/private.mp4' }] }, token: admin })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/process/carol-2/command', { body: { command: 'start' }, token })).status, 200);
  const refused = await waitFor(async () => {
    const st = (await app.request('GET', '/api/v3/process/carol-2/state', { token: admin })).body;
    return st.exec === 'failed' ? st : undefined;
  }, { timeout: 20_000, what: 'carol-2 refused at its start' });
  t.match(refused.last_logline, /start refused: the process may not GET fs \/bob\/private\.mp4/, refused.last_logline);

  // a disk playlist item of hers, rewritten after its PUT to name his file: what it leads to is asked at each item start
  await writeFile(join(disk, 'carol', 'show.m3u8'), '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1,\nmine.mp4\n#EXT-X-ENDLIST\n');
  t.equal((await app.request('PUT', '/api/v3/playlist/carol-show', { body: { items: [{ source: '/carol/show.m3u8' }] }, token })).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: player('carol-3', 'carol-show'), token })).status, 200);
  await writeFile(join(disk, 'carol', 'show.m3u8'), '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1,\n../bob/private.mp4\n#EXT-X-ENDLIST\n');
  t.equal((await app.request('PUT', '/api/v3/process/carol-3/command', { body: { command: 'start' }, token })).status, 200);
  const skipped = await waitFor(async () => {
    const st = (await app.request('GET', '/api/v3/process/carol-3/state', { token: admin })).body;
    return st.playlist?.in?.skipped > 0 ? st : undefined;
  }, { timeout: 20_000, what: 'carol-3\'s item skipped' });
  t.equal(skipped.playlist.in.played, 0, 'what her playlist leads to now is not played');

  // a relay of hers switched to his file: refused (403), as her process's own input would be
  const relayed = { id: 'carol-4', autostart: true, input: [{ id: 'in', address: `playout:${join(disk, 'carol', 'mine.mp4')}`, options: [] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body: relayed, token })).status, 200);
  const sw = await waitFor(async () => {
    const r = await app.request('PUT', '/api/v3/process/carol-4/playout/in/stream', { raw: join(disk, 'bob', 'private.mp4'), headers: { 'content-type': 'text/plain' }, token });
    return r.status === 404 ? undefined : r;
  }, { timeout: 20_000, what: 'carol-4\'s relay' });
  t.equal(sw.status, 403, `a switch to his file: ${sw.text.slice(0, 200)}`);
  t.match(sw.body, { code: 403, details: [/GET fs \/bob\/private\.mp4/] });
  // other spellings ffmpeg opens as local files: no protocol prefix but file:, no relative path
  for (const raw of [`concat:${join(disk, 'bob', 'private.mp4')}`, `file:concat:${join(disk, 'bob', 'private.mp4')}`, `cache:${join(disk, 'bob', 'private.mp4')}`, 'data/../disk/bob/private.mp4']) {
    const r = await app.request('PUT', '/api/v3/process/carol-4/playout/in/stream', { raw, headers: { 'content-type': 'text/plain' }, token });
    t.equal(r.status, 400, `${raw}: ${r.text.slice(0, 160)}`);
  }
  // a playlist of hers naming his file: what it leads to counts
  const via = await app.request('PUT', '/api/v3/process/carol-4/playout/in/stream', { raw: `file://${join(disk, 'carol', 'show.m3u8')}`, headers: { 'content-type': 'text/plain' }, token });
  t.equal(via.status, 403, `a playlist of hers leading to his file: ${via.text.slice(0, 200)}`);
  // her read of her own folder taken away: the restart is refused and the relay stops with it (it went on reading)
  t.equal((await app.request('PUT', '/api/v3/iam/user/carol/policy', { body: [carol.policies[0], process, mine], token: admin })).status, 200);
  t.equal((await app.request('PUT', '/api/v3/process/carol-4/command', { body: { command: 'restart' }, token: admin })).status, 200);
  await waitFor(async () => (await app.request('GET', '/api/v3/process/carol-4/state', { token: admin })).body.exec === 'failed' || undefined, { timeout: 20_000, what: 'carol-4 refused' });
  await waitFor(async () => (await app.request('GET', '/api/v3/process/carol-4/playout/in/status', { token: admin })).status === 404 || undefined, { timeout: 10_000, what: 'its relay stopped' });
  for (const id of ['carol-2', 'carol-3', 'carol-4']) await app.request('DELETE', `/api/v3/process/${id}`, { token: admin });
});
