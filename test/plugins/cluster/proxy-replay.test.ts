import t from 'tap';
import { connect, createServer, type Socket } from 'node:net';
import { CLIENT_HEADER, HOP_HEADER, PeerKey, SIGNATURE_WINDOW_MS } from '../../../plugins/cluster/peer.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';
import { createProcesses, startNode } from './proxy-nodes.ts';

const missing = natsMissing();

/** Request heads seen on the wire between the nodes: `<METHOD> <path>` and the signed client header. */
interface Seen { method: string; path: string; client?: string }

/**
 * A TCP relay in front of a node's API that records what passes (as someone on the path between
 * two nodes would see it). `target` is set once the node listens.
 */
async function wiretap(t: { teardown(fn: () => unknown): void }): Promise<{ port: number; target: { port: number }; seen: Seen[] }> {
  const target = { port: 0 };
  const seen: Seen[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const up = connect(target.port, '127.0.0.1');
    for (const s of [client, up]) { sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s)); }
    let text = '';
    client.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      for (let end = text.indexOf('\r\n\r\n'); end >= 0; end = text.indexOf('\r\n\r\n')) {
        const [line, ...headers] = text.slice(0, end).split('\r\n');
        const [method, path] = line!.split(' ');
        const client = headers.find((h) => h.toLowerCase().startsWith(`${CLIENT_HEADER}:`))?.slice(CLIENT_HEADER.length + 1).trim();
        if (method && path && /^[A-Z]+$/.test(method)) seen.push({ method, path, client });
        text = text.slice(end + 4);
      }
    });
    client.pipe(up);
    up.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { for (const s of sockets) s.destroy(); return new Promise((r) => server.close(r)); });
  return { port: (server.address() as { port: number }).port, target, seen };
}

t.test('a captured cluster header cannot be replayed: not with another body, another path, twice, late or at another node', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const one = { servers: [nats.servers[0]!.url], replicas: 1 };
  const tap = await wiretap(t);
  const a = await startNode(t, nats, 'a', 0, one);
  // b blocks 10.66.1.0/24; other nodes reach it through the wiretap
  const b = await startNode(t, nats, 'b', 1, { ...one, api_address: `http://127.0.0.1:${tap.port}` });
  tap.target.port = Number(new URL(b.url).port);
  await waitFor(async () => {
    const v = (await a.kit.request('GET', '/api/v3/cluster', { token: a.token })).body;
    return v.nodes?.length === 2 && v.leader;
  }, { timeout: 30_000, what: 'two nodes and a leader' });
  const owners = await createProcesses([a, b], ['replay 1', 'replay 2']);
  const id = Object.keys(owners).find((p) => owners[p] === 'b')!;
  t.ok(id, `a process runs on b (${JSON.stringify(owners)})`);
  const path = `/api/v3/process/${encodeURIComponent(id)}/metadata/note`;
  const auth = { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' };

  // a client b does not block writes through a: a signs its address for b, the wiretap sees it
  await waitFor(async () => {
    const r = await a.kit.inject({ method: 'PUT', url: path, headers: auth, payload: '{"v":1}', remoteAddress: '10.66.7.5' });
    return r.statusCode === 200;
  }, { timeout: 30_000, what: 'the write through a' });
  const note = async () => JSON.parse((await b.kit.inject({ method: 'GET', url: path, headers: auth, remoteAddress: '10.66.7.5' })).body);
  t.same(await note(), { v: 1 }, 'the body passed through a reached b');
  const captured = tap.seen.filter((s) => s.method === 'PUT' && s.path === path).pop()?.client;
  t.ok(captured, 'the signed client header was seen on the wire');

  // a client b blocks (10.66.1.5) sends the captured header itself, straight to b
  const replay = (url: string, payload: string, header = captured!) =>
    b.kit.inject({ method: 'PUT', url, headers: { ...auth, [CLIENT_HEADER]: header, [HOP_HEADER]: 'a' }, payload, remoteAddress: '10.66.1.5' });
  t.equal((await replay(path, '{"v":2}')).statusCode, 403, 'another body: judged as the blocked sender');
  t.equal((await replay(path, '{"v":1}')).statusCode, 403, 'the same request again: the nonce was used');
  t.equal((await replay(`/api/v3/process/${encodeURIComponent(id)}/metadata/other`, '{"v":1}')).statusCode, 403, 'another path');
  t.same(await note(), { v: 1 }, 'nothing a replay sent was stored');

  // with the cluster key (read from core_assign): what a node would sign, used as an attacker could not
  const { kv } = await openBucket(t, nats.servers[0]!.url, 'assign', 3000, 1);
  const key = new PeerKey('b');
  await key.load(kv);
  const sign = (body: string, node = 'b', at = Date.now()) => key.sign({ ip: '10.66.7.5', method: 'PUT', url: path, node, body: Buffer.from(body) }, at)!;
  t.equal((await replay(path, '{"v":3}', sign('{"v":3}', 'b', Date.now() - SIGNATURE_WINDOW_MS - 5000))).statusCode, 403, 'after the window');
  t.equal((await replay(path, '{"v":3}', sign('{"v":3}', 'a'))).statusCode, 403, 'signed for another node');
  const swapped = await replay(path, '{"v":4}', sign('{"v":3}'));
  t.equal(swapped.statusCode, 403, 'a fresh header for one body, sent with another');
  t.match(JSON.parse(swapped.body).details, [/not the one its signed peer header covers/], 'refused by the body check');
  t.same(await note(), { v: 1 });
  t.equal((await replay(path, '{"v":5}', sign('{"v":5}'))).statusCode, 200, 'a fresh header for this request and body vouches for its client');
  t.same(await note(), { v: 5 });
});
