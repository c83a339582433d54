import t from 'tap';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Streams } from '../../../core/streams/table.ts';
import { StreamRelay } from '../../../plugins/cluster/relay.ts';
import { TsCutter } from '../../../sdk/index.ts';
import type { ClusterView } from '../../../plugins/cluster/schema.ts';
import type { IngestPeer, StreamSink } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * The pull relay's rules without NATS or ffmpeg: the real stream table, a stand-in for the other
 * node's pull route (an HTTP server answering the recorded MPEG-TS fixture in odd-sized chunks),
 * a hand-made live view. Which names it takes, its bounds, that it never loops, how it ends.
 */

const TS = await readFile(new URL('../../fixtures/srt/h264-aac.mpegts', import.meta.url));
const log = { info: () => {}, warn: () => {} };

t.test('TsCutter hands on whole 188-byte packets whatever the chunks', async (t) => {
  const c = new TsCutter();
  const out: Buffer[] = [];
  for (let i = 0; i < TS.length; i += 1000) { const p = c.cut(TS.subarray(i, i + 1000)); if (p) out.push(p); }
  const all = Buffer.concat(out);
  t.ok(out.every((b) => b.length % 188 === 0 && b[0] === 0x47), 'each cut is whole packets');
  t.same(all, TS.subarray(0, TS.length - (TS.length % 188)), 'nothing lost or reordered');
  t.throws(() => new TsCutter().cut(Buffer.alloc(376, 1)), /sync byte/, 'not MPEG-TS: refused');
});

function peer(id: string, protocol = 'rtmp'): IngestPeer {
  return { id, protocol, stream: id, remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };
}
const sink = (): StreamSink<'mpegts'> & { stopped?: string } => {
  const s: StreamSink<'mpegts'> & { stopped?: string } = { send: () => true, stop: (why) => { s.stopped = why; } };
  return s;
};

/** The other node's pull route: `good` streams the fixture and stays open, `slow` never answers, others 404. */
async function otherNode(t: { teardown(fn: () => unknown): void }) {
  const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    seen.push({ url: req.url!, headers: req.headers });
    const name = new URL(req.url!, 'http://x').searchParams.get('name');
    if (name === 'slow') return;
    if (name !== 'good' && name !== 'short') { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': 'video/mp2t' });
    for (let i = 0; i < TS.length; i += 1001) res.write(TS.subarray(i, i + 1001));
    // `short` ends a while after it started (a reader joins meanwhile)
    if (name === 'short') setTimeout(() => res.end(), 500); else open.add(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => { server.closeAllConnections(); return new Promise((r) => server.close(r)); });
  return { seen, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function view(base: string, names: string[], self: string[] = []): ClusterView {
  const node = (id: string, streams: string[]) => ({
    id, api_address: id === 'a' ? base : 'http://127.0.0.1:1', capacity: { cpus: 1, max_processes: 0 },
    load: { loadavg: 0, processes_running: 0 }, version: '1', started_at: '', streams,
  });
  return { node_id: 'b', leader: 'a', nodes: [node('a', names), node('b', self)], assignments: [], health: { nats: 'connected', last_error: null } };
}

t.test('a relay pulls what another node announces, within its bounds, and never loops', async (t) => {
  const other = await otherNode(t);
  const streams = new Streams();
  const relay = new StreamRelay({
    streams, node: { id: 'b', view: () => view(other.base, ['good', 'short', 'slow', 'gone', 'busy', 'third'], ['mine']) }, max: 2, log, checkMs: 50,
    headers: (to, url) => ({ 'x-core-cluster-hop': 'b', 'x-test-to': to.node, 'x-test-url': url }), firstByteMs: 500, idleMs: 300,
  });
  relay.open();
  t.teardown(() => { relay.close(); streams.close(); });
  const local = streams.publish('busy', 'mpegts', peer('busy'), { internal: true });
  t.ok(local.ok);

  t.same(relay.waiting().sort(), ['gone', 'good', 'short', 'slow', 'third'], 'waiting: what others announce and nothing publishes here (never its own names)');
  t.notOk(relay.demand('mine'), 'a name only this node announces: never pulled from itself');
  t.notOk(relay.demand('busy'), 'a name published here: not pulled');
  t.notOk(relay.demand('nowhere'), 'a name nobody announces: refused at once');
  t.notOk(relay.quiet(() => relay.demand('good')), 'quiet (the pull route asking): nothing is pulled on');
  t.ok(await streams.whenPublished('good', 5000), 'a reader of an announced name waits for the relay and gets it');
  t.equal(streams.get('good')?.publisher.protocol, 'cluster', 'published by a peer of protocol cluster');
  t.match(other.seen[0], { url: '/api/v3/cluster/stream?name=good', headers: { 'x-core-cluster-hop': 'b', 'x-test-to': 'a' } }, 'pulled with the node headers');
  const r = streams.read('good', 'mpegts', peer('player'), sink(), { internal: true });
  t.ok(r.ok, 'a player reads it');
  t.same(relay.running(), ['good'], 'running: the relayed names');
  t.same(relay.served(), ['busy'], 'announced: live streams not published by a relay, never the relayed ones');

  t.ok(relay.demand('slow'), 'a second relay starts');
  t.notOk(relay.demand('third'), 'a third is refused: max_relays 2');
  await waitFor(() => !relay.active.includes('slow'), { timeout: 5000, what: 'the slow pull dropped at its first-byte deadline' });
  t.pass('a pull without an answer ends at its deadline');
  t.notOk(await streams.whenPublished('gone', 3000), 'a pull the other node answers 404 ends, and the reader is refused');

  if (r.ok) r.handle.leave();
  await waitFor(() => !streams.get('good'), { timeout: 5000, what: 'the relay ended without readers' });
  await waitFor(() => other.seen.length > 0 && relay.active.length === 0, { timeout: 5000, what: 'no relay left' });
  t.pass('a relay without readers ends (and the request to the other node is cut)');

  const s = sink();
  t.ok(await streams.whenPublished('short', 5000), 'a stream that ends on the other node');
  const rs = streams.read('short', 'mpegts', peer('p2'), s, { internal: true });
  t.ok(rs.ok);
  await waitFor(() => s.stopped, { timeout: 5000, what: 'the reader stopped' });
  t.equal(s.stopped, 'ended', 'ends here when it ended there');
});

t.test('max_relays 0: nothing is pulled or waited for', async (t) => {
  const streams = new Streams();
  const relay = new StreamRelay({
    streams, node: { id: 'b', view: () => view('http://127.0.0.1:1', ['good']) }, max: 0, log, checkMs: 50, headers: () => ({}),
  });
  relay.open();
  t.teardown(() => { relay.close(); streams.close(); });
  t.same(relay.waiting(), []);
  t.notOk(relay.demand('good'));
});
