import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { request, startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * A process does what its maker may, at every start (`httpHooksRef.processUseBy`): the IAM user
 * who last made or changed it is kept with it (db.json, the cluster's records) and asked again
 * before each run, so a policy taken away or the user deleted stops what the user made at its
 * next start (a restart, a reconnect) with the reason in its state (and a running one at once:
 * `ProcessesService.recheckMakers` after each change of IAM's users); a policy given back lets it
 * run again. A superuser's process, or one a superuser changed last, is not held to the user's.
 */

const JWT = 'iam-maker-jwt-secret-0123456789abcdef';
const API = { auth: { enable: true, username: 'admin', password: 'admin-pw', jwt: { secret: JWT } } };
const POLICIES = [
  { types: ['api'], resource: '/api/v3/process{,/**}', actions: ['GET', 'POST', 'PUT', 'DELETE'] },
  { types: ['process'], resource: 'alice-*', actions: ['read', 'write', 'command'] },
  { types: ['fs'], resource: '/memfs/alice/**', actions: ['GET', 'PUT', 'DELETE'] },
];
const alice = { name: 'alice', auth: { api: { userpass: { enable: true, password: 'alice password' } } }, policies: POLICIES };
/** A process writing HLS into memfs at `dir` (ten frames a second, a segment a second). */
const hls = (id: string, dir: string) => ({
  id, autostart: true, reconnect: false,
  input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
  output: [{ id: 'out', address: `{memfs}/${dir}/${id}.m3u8`, options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '10', '-f', 'hls', '-hls_time', '1', '-method', 'PUT'] }],
});

t.test('an IAM user\'s process is held to its maker\'s policies at each start', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200);
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: { ...alice, name: 'olive' }, token: admin })).status, 200, 'an older user, with her policies');
  // (by default anyone reads every public mount: then so may anyone's process)
  t.equal((await app.request('PUT', '/api/v3/iam/user/$anon/policy', { body: [], token: admin })).status, 200);
  const token = await login('alice', 'alice password');
  const stateOf = async (id: string) => (await app.request('GET', `/api/v3/process/${id}/state`, { token: admin })).body;
  const until = (id: string, exec: string, what: string) => waitFor(async () => { const s = await stateOf(id); return s.exec === exec ? s : undefined; }, { timeout: 20_000, what: `${id}: ${what}` });
  const command = async (id: string, c: string) => t.equal((await app.request('PUT', `/api/v3/process/${id}/command`, { body: { command: c }, token: admin })).status, 200, `${c} ${id}`);
  const written = (id: string, dir: string) => waitFor(async () => (await app.request('GET', `/api/v3/fs/mem/${dir}/${id}.m3u8`, { token: admin })).status === 200, { timeout: 20_000, what: `${id} writes its playlist` });

  t.equal((await app.request('POST', '/api/v3/process', { body: hls('alice-1', 'alice'), token })).status, 200, 'alice makes a process within her policies');
  await until('alice-1', 'running', 'running');
  await written('alice-1', 'alice');
  const db = JSON.parse(await readFile(join(app.dir, 'db', 'db.json'), 'utf8'));
  t.equal(db.process['alice-1'].maker, 'iam:alice', 'its maker is stored with it');
  // one that reconnects
  t.equal((await app.request('POST', '/api/v3/process', { body: { ...hls('alice-3', 'alice'), reconnect: true, reconnect_delay_seconds: 1 }, token })).status, 200);
  await until('alice-3', 'running', 'running');
  // the superuser's own process, writing where alice may not
  t.equal((await app.request('POST', '/api/v3/process', { body: hls('admin-1', 'bob'), token: admin })).status, 200);
  await until('admin-1', 'running', 'running');

  // a process of hers reading what the first writes: probed while she may read it
  const reader = { id: 'alice-2', autostart: false, input: [{ id: 'in', address: '{memfs}/alice/alice-1.m3u8', options: [] }], output: [{ id: 'out', address: '-', options: ['-f', 'null'] }] };
  t.equal((await app.request('POST', '/api/v3/process', { body: reader, token })).status, 200);
  const probed = (await app.request('GET', '/api/v3/process/alice-2/probe', { token: admin })).body;
  t.ok(probed.streams.length > 0, `probed: ${JSON.stringify(probed).slice(0, 200)}`);
  t.notMatch(JSON.stringify(probed), /process:alice-2:[A-Za-z0-9_-]{32}@/, 'the probe\'s credential not shown (its streams\' URLs)');

  // (a probe of the running process resolves it again, without its run's credential: the check below reads the run's own)
  t.equal((await app.request('GET', '/api/v3/process/alice-1/probe', { token: admin })).status, 200);
  // her memfs policy taken away: the running process stops at once, and its next start is refused
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: POLICIES.slice(0, 2), token: admin })).status, 200);
  const notProbed = (await app.request('GET', '/api/v3/process/alice-2/probe', { token: admin })).body;
  t.same(notProbed.streams, [], 'nor probed');
  t.match(notProbed.log, [/^probe refused: the process may not GET fs \/memfs\/alice\/alice-1\.m3u8/], 'the probe says why');
  const stopped = await waitFor(async () => {
    const s = await stateOf('alice-1');
    return s.exec !== 'running' && s.exec !== 'finishing' ? s : undefined;
  }, { timeout: 20_000, what: 'alice-1 stopped: its maker lost the policy' });
  t.not(stopped.exec, 'running', `stopped (${stopped.exec}: ${stopped.last_logline})`);
  t.ok((await app.request('GET', '/api/v3/log', { token: admin })).body.some((l: string) => /stopped: the process may not PUT fs \/memfs\/alice\/alice-1\.m3u8/.test(JSON.stringify(l))), 'the log says why');
  t.equal((await stateOf('admin-1')).exec, 'running', 'the superuser\'s process runs on');
  // one that reconnects is not started again to be refused: it stays stopped, with why
  const held = await until('alice-3', 'killed', 'stopped, not reconnected');
  t.match(held.last_logline, /stopped: the process may not PUT fs \/memfs\/alice\/alice-3\.m3u8/, 'its state says why');
  await new Promise((r) => setTimeout(r, 2500));
  t.match(await stateOf('alice-3'), { exec: 'killed', reconnect_seconds: -1, order: 'start' }, 'no reconnect (1 s) follows: still stopped 2.5 s later');
  await command('alice-1', 'restart');
  const refused = await until('alice-1', 'failed', 'refused at its start');
  t.match(refused.last_logline, /start refused: the process may not PUT fs \/memfs\/alice\/alice-1\.m3u8 \(no policy of its maker allows it\)/, `the reason in its state: ${refused.last_logline}`);
  t.equal(refused.order, 'start', 'its order stays: given the policy back, a start runs it');

  // given back: what was stopped or refused for her, ordered to start, runs again by itself
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: POLICIES, token: admin })).status, 200);
  await until('alice-1', 'running', 'refused at its start, running again once its maker may');
  await until('alice-3', 'running', 'stopped for its maker, running again once its maker may');
  t.equal((await stateOf('alice-2')).exec, 'finished', 'one never started stays so');

  // renamed: what she made is still hers (found by her former name), running on and at its next start
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice', { body: { name: 'carol' }, token: admin })).status, 200, 'alice renamed carol');
  await command('alice-1', 'stop');
  await waitFor(async () => !['running', 'finishing', 'starting'].includes((await stateOf('alice-1')).exec) || undefined, { timeout: 20_000, what: 'alice-1 stopped' });
  await command('alice-1', 'start');
  const renamed = await until('alice-1', 'running', 'a renamed maker\'s process starts');
  t.notMatch(renamed.last_logline, /refused/);
  t.equal((await app.request('PUT', '/api/v3/iam/user/carol', { body: { name: 'alice' }, token: admin })).status, 200, 'and back');
  t.equal((await stateOf('alice-1')).exec, 'running');

  // alice deleted: her process cannot start again
  t.equal((await app.request('DELETE', '/api/v3/iam/user/alice', { token: admin })).status, 200);
  await command('alice-1', 'restart');
  const gone = await until('alice-1', 'failed', 'refused: its maker is gone');
  t.match(gone.last_logline, /start refused: the process may not PUT fs /, 'a deleted maker may nothing');
  // an older user renamed to her name is not her either
  t.equal((await app.request('PUT', '/api/v3/iam/user/olive', { body: { name: 'alice' }, token: admin })).status, 200, 'olive renamed alice');
  const reportAt = async () => (await app.request('GET', '/api/v3/process/alice-1/report', { token: admin })).body.created_at as number;
  const at = await reportAt();
  await waitFor(() => Math.floor(Date.now() / 1000) > at || undefined, { what: 'a second after its last start' });
  await command('alice-1', 'restart');
  const again = await waitFor(async () => {
    const s = await stateOf('alice-1');
    return (await reportAt()) > at && ['failed', 'running'].includes(s.exec) ? s : undefined;
  }, { timeout: 20_000, what: 'its start again' });
  t.equal(again.exec, 'failed', `a user renamed to the name later is not its maker (${again.last_logline})`);
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice', { body: { name: 'olive' }, token: admin })).status, 200, 'and back');
  // another user given her name later is not her: what she made stays refused
  const madeAt = JSON.parse(await readFile(join(app.dir, 'db', 'db.json'), 'utf8')).process['alice-1'].updated_at as number;
  await waitFor(() => Math.floor(Date.now() / 1000) > madeAt || undefined, { what: 'a second after it was made' });
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200, 'a new alice');
  await command('alice-1', 'restart');
  const reused = await until('alice-1', 'failed', 'refused: a new user of the name is not its maker');
  t.match(reused.last_logline, /start refused: the process may not PUT fs /, 'the new alice\'s policies do not count');

  // the superuser's process is not held to any user's policies; one the superuser changed last is theirs
  await command('admin-1', 'restart');
  await until('admin-1', 'running', 'the superuser\'s process runs on');
  t.equal((await app.request('PUT', '/api/v3/process/alice-1', { body: { ...hls('alice-1', 'alice'), reference: 'taken over' }, token: admin })).status, 200);
  await until('alice-1', 'running', 'changed by the superuser: theirs now');
  const after = JSON.parse(await readFile(join(app.dir, 'db', 'db.json'), 'utf8'));
  t.equal(after.process['alice-1'].maker, 'admin', 'its maker is who changed it last');
  for (const id of ['alice-1', 'alice-2', 'alice-3', 'admin-1']) t.equal((await app.request('DELETE', `/api/v3/process/${id}`, { token: admin })).status, 200);
});

t.test('an on-demand process\'s waiting playlist is written only where its maker may still write', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200);
  const token = await login('alice', 'alice password');
  const ondemand = (id: string, dir: string) => ({ ...hls(id, dir), ondemand: { enable: true, idle_seconds: 5 } });
  const file = (dir: string, id: string) => app.request('GET', `/api/v3/fs/mem/${dir}/${id}.m3u8`, { token: admin });
  const waiting = (dir: string, id: string) => waitFor(async () => (await file(dir, id)).status === 200 || undefined, { timeout: 20_000, what: `${id}'s waiting playlist` });
  const command = async (id: string, c: string) => t.equal((await app.request('PUT', `/api/v3/process/${id}/command`, { body: { command: c }, token: admin })).status, 200, `${c} ${id}`);
  t.equal((await app.request('POST', '/api/v3/process', { body: ondemand('alice-od', 'alice'), token })).status, 200);
  t.equal((await app.request('POST', '/api/v3/process', { body: ondemand('admin-od', 'shared'), token: admin })).status, 200);
  await waiting('alice', 'alice-od');
  await waiting('shared', 'admin-od');
  // stopped (the waiting playlists go), her memfs policy taken away, started again: only the superuser's is written
  for (const id of ['alice-od', 'admin-od']) await command(id, 'stop');
  await waitFor(async () => ((await file('alice', 'alice-od')).status === 404 && (await file('shared', 'admin-od')).status === 404) || undefined, { what: 'the waiting playlists removed' });
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: POLICIES.slice(0, 2), token: admin })).status, 200);
  for (const id of ['alice-od', 'admin-od']) await command(id, 'start');
  await waiting('shared', 'admin-od');
  t.equal((await file('alice', 'alice-od')).status, 404, 'none written for the process whose maker may no longer write there');
});

t.test('a policy given back while the run it stopped still ends: the process runs again once that run has ended', async (t) => {
  const app = await startApp(t, { config: { api: API, iam: { enable: true } } });
  const login = async (u: string, p: string) => (await request(app.url, 'POST', '/api/login', { body: { username: u, password: p } })).body.access_token as string;
  const admin = await login('admin', 'admin-pw');
  t.equal((await app.request('POST', '/api/v3/iam/user', { body: alice, token: admin })).status, 200);
  const token = await login('alice', 'alice password');
  // a receiver that takes the connection and never reads: ffmpeg blocks in its write, so after the
  // stop's SIGINT it keeps ending (finishing) until the grace's SIGKILL, seconds later
  let connections = 0;
  const sockets = new Set<Socket>();
  const receiver = createServer((s) => { connections++; sockets.add(s); s.pause(); s.on('error', () => {}); });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  t.teardown(() => { for (const s of sockets) s.destroy(); receiver.close(); });
  const port = (receiver.address() as AddressInfo).port;
  const body = {
    id: 'alice-slow', autostart: true, reconnect: false,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=25', options: ['-f', 'lavfi'] }],
    output: [
      { id: 'tcp', address: `tcp://127.0.0.1:${port}`, options: ['-c:v', 'rawvideo', '-f', 'nut'] },
      { id: 'mem', address: '{memfs}/alice/slow.ts', options: ['-c:v', 'mpeg2video', '-f', 'mpegts', '-method', 'PUT'] },
    ],
  };
  t.equal((await app.request('POST', '/api/v3/process', { body, token })).status, 200);
  const state = async () => (await app.request('GET', '/api/v3/process/alice-slow/state', { token: admin })).body;
  // running and blocked: its frame count no longer moves
  let frames = -1;
  await waitFor(async () => {
    const s = await state();
    const f = Number(s.progress?.frame ?? 0);
    const still = s.exec === 'running' && connections === 1 && f > 0 && f === frames;
    frames = f;
    if (!still) await new Promise((r) => setTimeout(r, 500));
    return still || undefined;
  }, { timeout: 30_000, what: 'alice-slow running, blocked in its write' });
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: POLICIES.slice(0, 2), token: admin })).status, 200, 'her memfs policy taken away');
  t.equal((await state()).exec, 'finishing', 'its run is ending (the grace runs)');
  t.equal((await app.request('PUT', '/api/v3/iam/user/alice/policy', { body: POLICIES, token: admin })).status, 200, 'and given back at once');
  t.equal((await state()).exec, 'finishing', 'given back while that run still ends');
  await waitFor(async () => (connections === 2 && (await state()).exec === 'running') || undefined, { timeout: 30_000, what: 'alice-slow running again once its stopped run ended' });
  t.pass('it runs again, with no users change after the run ended');
  t.equal((await app.request('DELETE', '/api/v3/process/alice-slow', { token: admin })).status, 200);
});
