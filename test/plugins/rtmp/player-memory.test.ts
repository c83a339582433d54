import t from 'tap';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { FlvPacket, IngestPeer } from '../../../sdk/index.ts';
import { Streams } from '../../../core/streams/table.ts';
import { PlayerOutput, SLICE_BYTES } from '../../../plugins/rtmp/player-output.ts';
import { request, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { startRtmpApp, publish } from './helpers.ts';
import { RawRtmp, session } from './wire-kit.ts';

/*
 * What a player holds (issue 29.3): the channel's packets are one Buffer each, shared by every
 * player; a player whose socket is full queues references in its own bounded queue (not an
 * entry per packet in the socket's Writable); a player past the cap is dropped with its queue;
 * a player that leaves leaves nothing behind in the channel.
 */

const KB = 1024;

const PACKET = 64 * KB;

/** `received`: bytes that arrived; `firsts`: the first byte of each packet, in arrival order. */
interface Pair { server: Socket; client: Socket; output: PlayerOutput; received: number; firsts: number[] }

/** `n` TCP connections on loopback: the server side of each wrapped in a PlayerOutput. */
async function pairs(t: TestLike, n: number, cap: number): Promise<Pair[]> {
  const accepted: Socket[] = [];
  const srv: Server = createServer((s) => accepted.push(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  const clients: Socket[] = [];
  for (let i = 0; i < n; i++) clients.push(connect(port, '127.0.0.1'));
  t.teardown(() => {
    for (const s of [...clients, ...accepted]) s.destroy();
    srv.close();
  });
  await waitFor(() => accepted.length === n, { what: 'the connections accepted' });
  // in accept order, matched by port, so each server socket meets its own client
  return accepted.map((server) => {
    const client = clients.find((c) => c.localPort === server.remotePort)!;
    const pair: Pair = { server, client, output: new PlayerOutput(server, cap, (p) => p.wire!), received: 0, firsts: [] };
    client.on('data', (d: Buffer) => {
      for (let k = (PACKET - (pair.received % PACKET)) % PACKET; k < d.length; k += PACKET) pair.firsts.push(d[k]!);
      pair.received += d.length;
    });
    client.on('error', () => {});
    server.on('error', () => {});
    client.pause();
    return pair;
  });
}

/** A packet of `size` bytes, each its index (mod 256), so order can be checked on arrival. */
const packet = (i: number, size: number): FlvPacket => {
  const wire = Buffer.alloc(size, i % 256);
  return { kind: 'frame', type: 9, codec: 7, timestamp: i, body: wire, wire };
};
const peer = (id: string): IngestPeer => ({ id, protocol: 'rtmp', stream: '/live/mem', remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) });

t.test('stalled players: packets shared, queued as references, bounded, released', async (t) => {
  const cap = 4 * 1024 * KB;
  const ps = await pairs(t, 6, cap);
  const table = new Streams();
  const pub = table.publish('live/mem', 'flv', peer('pub'), { internal: true });
  if (!pub.ok) throw new Error(pub.reason);
  const ch = pub.handle;
  const dropped = new Set<string>();
  const readers = ps.map((p, i) => table.read('live/mem', 'flv', peer(`p${i}`), {
    send: (b) => { const ok = p.output.send(b); if (!ok) { dropped.add(`p${i}`); p.server.destroy(); } return ok; },
    stop: () => p.server.end(),
  }, { internal: true }));
  const pushed: FlvPacket[] = [];
  // 64 KiB packets until every socket is full (the kernel's buffers too) and each holds a queue
  for (let i = 0; i < 4000 && ps.some((p) => p.output.queued < 512 * KB); i++) {
    const p = packet(i, PACKET);
    pushed.push(p);
    ch.push(p);
    await new Promise((r) => setImmediate(r));
  }
  t.equal(ch.readers, 6, 'every player still there');
  for (const [i, p] of ps.entries()) {
    t.ok(p.output.queued >= 512 * KB, `player ${i} queues ${p.output.queued} bytes`);
    // what the socket's Writable holds is at most one slice and one batch, not the whole backlog
    t.ok(p.server.writableLength <= SLICE_BYTES + PACKET, `player ${i}: the socket holds ${p.server.writableLength} bytes`);
    const pending = p.output.pending;
    const offset = pushed.length - pending.length;
    t.ok(pending.every((b, j) => b === pushed[offset + j]), `player ${i}: the queue holds the stream's own packets, in order`);
  }

  // players 0-2 read again: all bytes arrive, in order; players 3-5 stay stalled until the cap drops them
  for (const p of ps.slice(0, 3)) p.client.resume();
  const total = pushed.length * PACKET;
  await waitFor(() => ps.slice(0, 3).every((p) => p.received === total), { what: 'the resumed players get every byte', timeout: 30_000 });
  for (const [i, p] of ps.slice(0, 3).entries()) {
    t.same(p.firsts, pushed.map((_, k) => k % 256), `player ${i}: the packets in order`);
    t.equal(p.output.queued, 0, `player ${i}: nothing left in its queue`);
  }
  for (let i = 0; dropped.size < 3 && i < 4000; i++) {
    ch.push(packet(i, PACKET));
    await new Promise((r) => setImmediate(r));
  }
  t.same([...dropped].sort(), ['p3', 'p4', 'p5'], 'the stalled players were dropped at the cap');
  t.equal(ch.readers, 3, '... and left the stream');
  for (const p of ps.slice(3)) t.same([p.output.queued, p.output.pending.length], [0, 0], 'a dropped player keeps no packets');

  for (const [i, p] of ps.slice(0, 3).entries()) {
    p.client.destroy();
    const r = readers[i]!;
    if (r.ok) r.handle.leave();
  }
  await waitFor(() => ps.every((p) => p.server.destroyed || p.server.readyState === 'closed'), { what: 'every server socket closed' });
  t.equal(ch.readers, 0, 'no player left in the stream');
  ch.end();
  for (const p of ps) t.same([p.output.queued, p.output.pending.length], [0, 0], 'no player keeps packets');
});

t.test('the service: 40 players join and leave, nothing of them stays in the stream table', async (t) => {
  const app = await startRtmpApp(t, { max_connections_per_address: 200 });
  const port = app.rtmp.ports().rtmp;
  publish(t, `${app.base}/live/mem`, { seconds: 120 });
  await waitFor(async () => (await request(app.url, 'GET', '/api/v3/rtmp')).body.length === 1, { what: 'the publisher listed' });
  const players: RawRtmp[] = [];
  t.teardown(() => { for (const p of players) p.close(); });
  let handshakes = 0;
  for (let i = 0; i < 40; i++) {
    const p = await RawRtmp.open(port);
    players.push(p);
    if (await p.handshake()) handshakes++;
    p.write(session(port, 'live', 'mem', 'play'));
  }
  t.equal(handshakes, 40, 'every player did the handshake');
  await waitFor(() => app.rtmp.channels()[0]?.players === 40, { what: '40 players in the channel', timeout: 30_000 });
  // half of them stop reading for a while, then all leave
  for (const p of players.slice(0, 20)) p.socket.pause();
  t.ok(await Promise.all(players.slice(20).map((p) => p.waitReceived(p.received + 20 * KB))).then((r) => r.every(Boolean)), 'the reading half still receives');
  for (const p of players) p.close();
  await waitFor(() => app.rtmp.channels()[0]?.players === 0, { what: 'no player in the channel', timeout: 30_000 });
  t.equal(app.rtmp.channels().length, 1, 'the stream itself stays, with its publisher');
});
