import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t from 'tap';
import { CLIENT_HEADER, HOP_HEADER, KEY_NAME, PeerKey } from '../../../plugins/cluster/peer.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';
import { createProcesses, deadPort, startNode, type ProxyNode } from './proxy-nodes.ts';

const missing = natsMissing();
const enc = encodeURIComponent;

/** A real HTTP request (over TCP, as a client does) to a node. */
async function call(node: ProxyNode, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${node.url}${path}`, {
    method, headers: { authorization: `Bearer ${node.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed: unknown = text;
  try { parsed = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, body: parsed };
}

/** Plays `url` with ffmpeg for a few frames: true when it decoded them. */
function play(url: string): Promise<{ code: number | null; err: string }> {
  return new Promise((resolve) => {
    const p = spawn('ffmpeg', ['-hide_banner', '-v', 'error', '-i', url, '-frames:v', '15', '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (c) => { err += c; });
    const timer = setTimeout(() => p.kill('SIGKILL'), 30_000);
    p.on('exit', (code) => { clearTimeout(timer); resolve({ code, err }); });
  });
}

t.test('one API on every node: process requests and files answered through a node that does not run them', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(3);
  t.teardown(() => nats.stop());
  const a = await startNode(t, nats, 'a', 0);
  const b = await startNode(t, nats, 'b', 1);
  // c announces an address where nothing listens: its HTTP is down while it is still a live node
  const c = await startNode(t, nats, 'c', 2, { api_address: `http://127.0.0.1:${await deadPort()}` });
  const nodes = [a, b, c];
  // every node sees the three and the same leader, so placement puts one process on each
  await waitFor(async () => {
    const views = await Promise.all(nodes.map(async (n) => (await call(n, 'GET', '/api/v3/cluster')).body));
    return views.every((v) => v.nodes?.length === 3 && v.leader && v.leader === views[0].leader);
  }, { timeout: 30_000, what: 'three nodes and a leader' });

  // ids without ':' (ffmpeg would read `x:y_001.ts` in a playlist as a URL with protocol `x`)
  const ids = ['proxied 1', 'proxied 2', 'proxied 3'];
  const owners = await createProcesses(nodes, ids);
  t.same(Object.values(owners).sort(), ['a', 'b', 'c'], 'one process per node');
  const onB = ids.find((id) => owners[id] === 'b')!;
  const onC = ids.find((id) => owners[id] === 'c')!;
  const running = await waitFor(async () => {
    const s = await call(b, 'GET', `/api/v3/process/${enc(onB)}/state`);
    return s.body.exec === 'running' && s.body.progress?.frame > 0 ? s.body : undefined;
  }, { timeout: 30_000, what: 'the process running on its owner b' });

  t.test('state, process, report and metadata of b\'s process through a (with the caller\'s token)', async (t) => {
    // until a has read the cluster key it answers itself: wait for the owner's answer
    const s = await waitFor(async () => {
      const r = await call(a, 'GET', `/api/v3/process/${enc(onB)}/state`);
      return r.status === 200 && r.body.exec === 'running' ? r.body : undefined;
    }, { timeout: 20_000, what: 'the owner\'s state through a' });
    t.equal(s.pid, running.pid, 'the pid of the ffmpeg on b');
    const full = await call(a, 'GET', `/api/v3/process/${enc(onB)}?filter=state,report`);
    t.equal(full.status, 200);
    t.equal(full.body.state.exec, 'running');
    t.ok(Array.isArray(full.body.report.log) && full.body.report.log.length > 0, 'the report with b\'s log lines');
    const put = await call(a, 'PUT', `/api/v3/process/${enc(onB)}/metadata/where`, { via: 'a' });
    t.equal(put.status, 200, 'metadata written through a');
    t.same((await call(b, 'GET', `/api/v3/process/${enc(onB)}/metadata/where`)).body, { via: 'a' }, 'b has it');
    t.same((await call(a, 'GET', `/api/v3/process/${enc(onB)}/metadata/where`)).body, { via: 'a' });
    const missingProc = await call(a, 'GET', '/api/v3/process/no-such-process/state');
    t.equal(missingProc.status, 404, 'an unknown process is answered locally');
  });

  t.test('HLS of b\'s process plays through a; a file no process names is found by asking', async (t) => {
    await waitFor(async () => (await fetch(`${b.url}/memfs/${enc(onB)}.m3u8`)).status === 200, { timeout: 20_000, what: 'the playlist on b' });
    t.equal((await fetch(`${a.url}/memfs/${enc(onB)}.m3u8`)).status, 200, 'the playlist through a');
    const p = await play(`${a.url}/memfs/${enc(onB)}.m3u8`);
    t.equal(p.code, 0, `ffmpeg played it through a ${p.err}`);
    t.equal((await fetch(`${b.url}/memfs/loose.txt`, { method: 'PUT', body: 'on b' })).status, 201);
    const loose = await fetch(`${a.url}/memfs/loose.txt`);
    t.equal(loose.status, 200);
    t.equal(await loose.text(), 'on b', 'found on b by a HEAD probe');
    t.equal((await fetch(`${a.url}/memfs/loose.txt`, { method: 'HEAD' })).status, 200, 'HEAD too');
    await writeFile(join(b.kit.dir, 'disk', 'only-on-b.txt'), 'disk of b');
    const disk = await fetch(`${a.url}/only-on-b.txt`);
    t.equal(disk.status, 200, 'a disk file of b through a');
    t.equal(await disk.text(), 'disk of b');
    const none = await fetch(`${a.url}/memfs/nowhere.txt`);
    t.equal(none.status, 404, 'a file no node has: 404');
    t.equal((await none.json()).code, 404);
    t.equal((await fetch(`${a.url}/nowhere.txt`)).status, 404, 'nor a disk file');
  });

  t.test('the owner judges the real client address; a forged or foreign signature gives nothing', async (t) => {
    const path = `/api/v3/process/${enc(onB)}/state`;
    const auth = { authorization: `Bearer ${a.token}` };
    // b blocks 10.66.1.0/24, a does not: through a, b's list applies to the client, not to a's address
    const blocked = await a.kit.inject({ method: 'GET', url: path, headers: auth, remoteAddress: '10.66.1.5' });
    t.equal(blocked.statusCode, 403, 'refused by the owner b for the client it vouched for');
    const other = await a.kit.inject({ method: 'GET', url: path, headers: auth, remoteAddress: '10.66.7.5' });
    t.equal(other.statusCode, 200, 'another client passes both nodes');
    t.equal(JSON.parse(other.body).exec, 'running');

    const { kv } = await openBucket(t, nats.servers[1].url, 'assign', 3000, 3);
    const real = new PeerKey('b');
    await real.load(kv);
    const foreign = new PeerKey('b');
    foreign.use(Buffer.alloc(32, 1));
    const forged: [string, string][] = [
      ['no signature', '127.0.0.1'],
      ['a made-up signature', `127.0.0.1 ${Date.now()} ${'n'.repeat(16)} - ${'0f'.repeat(32)}`],
      ['signed with another key', foreign.sign({ ip: '127.0.0.1', method: 'GET', url: path, node: 'b' })!],
      ['signed for another request', real.sign({ ip: '127.0.0.1', method: 'GET', url: '/api/v3/process', node: 'b' })!],
    ];
    for (const [what, value] of forged) {
      const r = await b.kit.inject({ method: 'GET', url: path, headers: { ...auth, [CLIENT_HEADER]: value, [HOP_HEADER]: 'a' }, remoteAddress: '10.66.1.5' });
      t.equal(r.statusCode, 403, `${what}: still judged as the blocked peer`);
    }
    const loopback = await b.kit.inject({ method: 'GET', url: path, headers: { ...auth, [CLIENT_HEADER]: `10.66.1.5 ${Date.now()} ${'n'.repeat(16)} - ${'0f'.repeat(32)}` }, remoteAddress: '127.0.0.1' });
    t.equal(loopback.statusCode, 200, 'a forged blocked address does not count either');
    const signed = await b.kit.inject({ method: 'GET', url: path, headers: { ...auth, [CLIENT_HEADER]: real.sign({ ip: '10.66.1.5', method: 'GET', url: path, node: 'b' })! }, remoteAddress: '127.0.0.1' });
    t.equal(signed.statusCode, 403, 'the cluster key (read from core_assign) is what vouches');
    t.equal((await kv.get(KEY_NAME))?.operation, 'PUT', 'the key is in core_assign');
  });

  t.test('the process list on any node shows each process as its owner does', async (t) => {
    const list = await call(a, 'GET', '/api/v3/process?filter=state');
    t.equal(list.status, 200);
    t.same(list.body.map((p: { id: string }) => p.id).sort(), [...ids].sort(), 'every process, once');
    const fromB = list.body.find((p: { id: string }) => p.id === onB);
    t.equal(fromB.state.exec, 'running', 'b\'s process runs (b\'s state, not a\'s view)');
    t.equal(fromB.state.pid, running.pid);
    t.not(list.body.find((p: { id: string }) => p.id === onC).state.exec, 'running', 'c\'s API is down: a\'s own view of it');
    const filtered = await call(a, 'GET', `/api/v3/process?id=${enc(onB)}&filter=state`);
    t.same(filtered.body.map((p: { state: { exec: string } }) => p.state.exec), ['running'], 'the filters of the query hold');
    const anonymous = await fetch(`${a.url}/api/v3/process`);
    t.equal(anonymous.status, 401, 'without a credential: refused, as on one node');
  });

  t.test('a request another node passed on is never passed on again', async (t) => {
    const r = await a.kit.inject({ method: 'GET', url: `/api/v3/process/${enc(onB)}/state`, headers: { authorization: `Bearer ${a.token}`, [HOP_HEADER]: 'b' } });
    t.equal(r.statusCode, 200);
    t.not(JSON.parse(r.body).exec, 'running', 'a\'s own view: it does not run the process');
  });

  t.test('an owner whose API does not answer: 502 with the Error body', async (t) => {
    const r = await call(a, 'GET', `/api/v3/process/${enc(onC)}/state`);
    t.equal(r.status, 502);
    t.equal(r.body.code, 502);
    t.equal(r.body.message, 'Bad Gateway');
    t.match(r.body.details[0], /node c did not answer/);
  });

  t.test('a command through a takes effect on b', async (t) => {
    const r = await call(a, 'PUT', `/api/v3/process/${enc(onB)}/command`, { command: 'stop' });
    t.equal(r.status, 200);
    await waitFor(async () => (await call(b, 'GET', `/api/v3/process/${enc(onB)}/state`)).body.exec === 'finished', { timeout: 20_000, what: 'stopped on b' });
    t.pass('the ffmpeg on b stopped');
  });

  t.test('an owner that left: handled locally (or by its next owner), never a 502', async (t) => {
    await c.kit.close();
    await waitFor(async () => !(await call(a, 'GET', '/api/v3/cluster')).body.nodes.some((n: { id: string }) => n.id === 'c'), { timeout: 20_000, what: 'c gone from a\'s view' });
    const r = await call(a, 'GET', `/api/v3/process/${enc(onC)}/state`);
    t.ok(r.status < 500, `answered (${r.status})`);
  });
});
