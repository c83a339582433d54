import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request, startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { detectMechanism } from '../../../core/process/confine/mechanism.ts';
import { portRange } from '../playout/helpers.ts';

/*
 * What a user's process reaches of the disk is its maker's folders, by the kernel
 * (`httpHooksRef.makerFolders`, `ChildSpawnOptions.disk`): the command's own uses were asked of
 * the policies, but a file named inside what it reads (an HLS playlist's segment, a concat list's
 * entry) was read wherever it lay. Alice's playlist in her folder naming bob's segment: ffmpeg is
 * refused it (Permission denied); her own segments play, her writes land in her folder, and a
 * superuser's process reads everything as before.
 */

const run = promisify(execFile);
const mechanism = detectMechanism();
const skip = mechanism.mechanism !== 'landlock' ? 'no Landlock here' : false;

const JWT = 'iam-disk-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const alice = {
  name: 'alice', auth: { api: { userpass: { enable: true, password: 'alice password' } } }, policies: [
    { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['GET', 'POST', 'PUT', 'DELETE'] },
    { types: ['process'], resource: 'alice-*', actions: ['read', 'write', 'command'] },
    { types: ['fs'], resource: '/alice/**', actions: ['GET', 'PUT', 'DELETE'] },
  ],
};
/** A VOD playlist of one segment at `uri`. */
const vod = (uri: string) => `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:2.0,\n${uri}\n#EXT-X-ENDLIST\n`;

const SEGMENT = ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=25', '-t', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-f', 'mpegts', '-y'];

/** The service with iam (and `extra`), bob's segment, alice's playlist naming it, alice made (`$anon` may read nothing); the tokens. */
async function site(t: Test, extra: Record<string, unknown> = {}) {
  const app = await startApp(t, { config: { api: API, iam: { enable: true }, ...extra } });
  const disk = join(app.dir, 'disk');
  for (const d of ['alice', 'bob']) mkdirSync(join(disk, d), { recursive: true });
  await run('ffmpeg', [...SEGMENT, join(disk, 'bob', 'secret.ts')]);
  writeFileSync(join(disk, 'alice', 'peek.m3u8'), vod('../bob/secret.ts'));
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200);
  // (by default anyone reads every public mount: then so may anyone's process)
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: [], token: admin })).status, 200);
  return { app, disk, admin, token: await login('alice', 'alice password') };
}

t.test('a user\'s process reaches only its maker\'s folders of the disk', { skip }, async (t) => {
  const { app, disk, admin, token } = await site(t);
  await run('ffmpeg', [...SEGMENT, join(disk, 'alice', 'own.ts')]);
  writeFileSync(join(disk, 'alice', 'own.m3u8'), vod('own.ts'));
  /** Runs a process once as `as`, reading `input` into `output`; its frames and last log lines. */
  const once = async (id: string, input: string, output: string, as: string) => {
    const body = { id, reconnect: false, autostart: true, input: [{ id: 'in', address: input, options: [] }], output: [{ id: 'out', address: output, options: ['-c', 'copy', '-f', 'mpegts'] }] };
    const made = await app.request('POST', '/api/v3/process', { body, token: as });
    t.equal(made.status, 200, `${id} made (${made.text.slice(0, 200)})`);
    const r = await waitFor(async () => {
      const s = (await app.request('GET', `/api/v3/process/${id}/state`, { token: admin })).body;
      if (!['finished', 'failed', 'killed'].includes(s.exec)) return undefined;
      const rep = (await app.request('GET', `/api/v3/process/${id}/report`, { token: admin })).body;
      const entry = rep.log?.length ? rep : rep.history?.at(-1);
      return entry ? { exec: s.exec as string, frames: Number(s.progress?.frame ?? 0), log: (entry.log as [string, string][]).map((l) => l[1]).join('\n') } : undefined;
    }, { timeout: 30_000, what: `${id} ran` });
    return r;
  };

  const own = await once('alice-own', '{diskfs}/alice/own.m3u8', '{diskfs}/alice/copy.ts', token);
  t.ok(existsSync(join(disk, 'alice', 'copy.ts')) && readFileSync(join(disk, 'alice', 'copy.ts')).length > 10_000,
    `her own segments play, her copy is written in her folder (${own.exec}, ${own.log.split('\n').slice(-2).join(' / ')})`);
  const peek = await once('alice-peek', '{diskfs}/alice/peek.m3u8', '{diskfs}/alice/stolen.ts', token);
  t.match(peek.log.split('\n').slice(-8).join('\n'), /Failed to open segment|Permission denied/, 'bob\'s segment named by her playlist: refused by the kernel');
  const stolen = join(disk, 'alice', 'stolen.ts');
  t.ok(!existsSync(stolen) || readFileSync(stolen).length < 1000, 'nothing of it copied');
  // the superuser's process is not narrowed
  const theirs = await once('admin-peek', '{diskfs}/alice/peek.m3u8', '{diskfs}/admin.ts', admin);
  t.ok(readFileSync(join(disk, 'admin.ts')).length > 10_000, `the superuser's process reads it (${theirs.exec})`);
});

t.test('the playout relay of a user\'s process reaches only its maker\'s folders too', { skip }, async (t) => {
  const [min, max] = await portRange(4);
  const { app, disk, admin, token } = await site(t, { playout: { enable: true, min_port: min, max_port: max } });
  const relayed = (id: string, out: string, as: string) => app.request('POST', '/api/v3/process', { token: as, body: {
    id, reconnect: false, autostart: true,
    input: [{ id: 'in', address: `playout:${join(disk, 'alice', 'peek.m3u8')}`, options: [] }],
    output: [{ id: 'out', address: `{diskfs}/${out}`, options: ['-c', 'copy', '-f', 'mpegts'] }],
  } });
  t.equal((await relayed('admin-relay', 'admin-relayed.ts', admin)).status, 200);
  const size = (p: string) => (existsSync(join(disk, p)) ? readFileSync(join(disk, p)).length : 0);
  await waitFor(() => size('admin-relayed.ts') > 10_000 || undefined, { timeout: 30_000, what: 'the superuser\'s relayed copy' });
  const made = await relayed('alice-relay', 'alice/relayed.ts', token);
  t.equal(made.status, 200, `her process with the playlist in her folder is made (${made.text.slice(0, 160)})`);
  // as long as the superuser's took to copy it, and more
  await new Promise((r) => setTimeout(r, 6000));
  t.ok(size('alice/relayed.ts') < 1000, `her relay is refused bob's segment (${size('alice/relayed.ts')} bytes copied)`);
});

t.test('a pattern in a policy\'s folder grants the folders it matches, never the whole disk', { skip }, async (t) => {
  const { app, disk, admin } = await site(t);
  const pattern = [...alice.policies.slice(0, 2), { types: ['fs'], resource: '/ali*/**', actions: ['GET', 'PUT'] }];
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: pattern, token: admin })).status, 200, 'her folders as /ali*/**');
  const token = (await request(app.url, 'POST', '/api/login', { body: { username: 'alice', password: 'alice password' } })).body.access_token as string;
  const body = { id: 'alice-glob', reconnect: false, autostart: true, input: [{ id: 'in', address: '{diskfs}/alice/peek.m3u8', options: [] }],
    output: [{ id: 'out', address: '{diskfs}/alice/glob.ts', options: ['-c', 'copy', '-f', 'mpegts'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body, token })).status, 200);
  const ended = await waitFor(async () => {
    const s = (await app.request('GET', '/api/v3/process/alice-glob/state', { token: admin })).body;
    return ['finished', 'failed', 'killed'].includes(s.exec) ? s : undefined;
  }, { timeout: 30_000, what: 'alice-glob ran' });
  const copied = existsSync(join(disk, 'alice', 'glob.ts')) ? readFileSync(join(disk, 'alice', 'glob.ts')).length : 0;
  t.ok(copied < 1000, `bob's segment refused (${ended.exec}, ${copied} bytes copied): /ali*/** is alice's folder, not the root`);
});

t.test('a playlist item\'s probe at insert reaches only the caller\'s folders of the disk', { skip }, async (t) => {
  const [min, max] = await portRange(4);
  const { app, disk, admin } = await site(t, { playout: { enable: true, min_port: min, max_port: max } });
  const lists = [...alice.policies, { types: ['api'], resource: '/api/v3/playlist{,/**}', actions: ['GET', 'PUT', 'DELETE'] }];
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: lists, token: admin })).status, 200);
  const token = (await request(app.url, 'POST', '/api/login', { body: { username: 'alice', password: 'alice password' } })).body.access_token as string;
  await run('ffmpeg', [...SEGMENT, join(disk, 'alice', 'own.ts')]);
  // a link in her folder that an operator made (no client or child can make one) to bob's file
  symlinkSync('../bob/secret.ts', join(disk, 'alice', 'link.ts'));
  const put = (name: string, source: string, as: string) => app.request('PUT', `/api/v3/playlist/${name}`, { token: as, body: { items: [{ source }] } });
  const own = await put('hers', 'alice/own.ts', token);
  t.equal(own.status, 200, `her own file is probed (${own.text.slice(0, 200)})`);
  t.equal(own.body.items[0].media?.width, 160);
  const linked = await put('peek', 'alice/link.ts', token);
  t.equal(linked.status, 400, `bob's file behind a link in her folder: the probe is refused it (${linked.text.slice(0, 200)})`);
  t.notOk(linked.body.items, 'no figures of bob\'s file answered');
  t.equal((await put('theirs', 'alice/link.ts', admin)).status, 200, 'the superuser\'s probe reaches it, as before');
});

t.test('a relay switched by another user reaches of the disk only what both it and the maker reach', { skip }, async (t) => {
  const [min, max] = await portRange(4);
  const { app, disk, admin, token } = await site(t, { playout: { enable: true, min_port: min, max_port: max } });
  const shared = { types: ['fs'], resource: '/shared/**', actions: ['GET', 'PUT'] };
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: [...alice.policies, shared], token: admin })).status, 200);
  const bob = { ...alice, name: 'bob', auth: { api: { userpass: { enable: true, password: 'bob password' } } }, policies: [alice.policies[0], alice.policies[1], shared] };
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: bob, token: admin })).status, 200, 'bob may command her processes and read the shared folder, not hers');
  const bobToken = (await request(app.url, 'POST', '/api/login', { body: { username: 'bob', password: 'bob password' } })).body.access_token as string;
  mkdirSync(join(disk, 'shared'), { recursive: true });
  await run('ffmpeg', [...SEGMENT, join(disk, 'alice', 'own.ts')]);
  await run('ffmpeg', [...SEGMENT, join(disk, 'alice', 'private.ts')]);
  await run('ffmpeg', [...SEGMENT, join(disk, 'shared', 'ok.ts')]);
  writeFileSync(join(disk, 'shared', 'list.m3u8'), vod('ok.ts'));
  const body = { id: 'alice-sw', reconnect: true, reconnect_delay_seconds: 1, autostart: true,
    input: [{ id: 'in', address: `playout:${join(disk, 'alice', 'own.ts')}`, options: [] }],
    output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body, token })).status, 200);
  const sw = await waitFor(async () => {
    const r = await app.request('PUT', '/api/v3/process/alice-sw/playout/in/stream', { raw: join(disk, 'shared', 'list.m3u8'), headers: { 'content-type': 'text/plain' }, token: bobToken });
    return r.status === 404 ? undefined : r;
  }, { timeout: 20_000, what: 'alice-sw\'s relay' });
  t.equal(sw.status, 204, `bob switches her relay to the shared playlist both may read (${sw.text.slice(0, 200)})`);
  // rewritten after the check to lead into her folder: the relay's next read of it is refused by the kernel
  writeFileSync(join(disk, 'shared', 'list.m3u8'), vod('../alice/private.ts'));
  const packets = async () => (await app.request('GET', '/api/v3/process/alice-sw/playout/in/status', { token: admin })).body.input?.packet as number;
  let last = await packets();
  const still = await waitFor(async () => {
    await new Promise((r) => setTimeout(r, 6000));
    const now = await packets();
    const same = now === last;
    last = now;
    return same || undefined;
  }, { timeout: 40_000, what: 'the source read no more (her file refused to the relay bob switched)' });
  t.ok(still, `no packet read from her private segment through bob's playlist (${last} packets in all)`);
  t.equal((await app.request('DELETE', '/api/v3/process/alice-sw', { token: admin })).status, 200);
});
