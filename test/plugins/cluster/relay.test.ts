import t, { type Test } from 'tap';
import { HOP_HEADER } from '../../../plugins/cluster/peer.ts';
import { placeholdersRef, streamTableRef, type StreamTable } from '../../../sdk/index.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { waitFor } from '../../helpers/wait.ts';
import { readFrames } from '../../core/process/ondemand/helpers.ts';
import { ndcViewer, TOKEN as WEBRTC_TOKEN } from '../webrtc/helpers.ts';
import { natsMissing, startNatsCluster } from './nats.ts';
import { assigned, startNode, type ProxyNode } from './proxy-nodes.ts';

/*
 * The cluster's pull relay (issue 34), with real ffmpeg and a real nats-server: an RTMP, SRT or
 * WHEP player on a node that does not own the process publishing its stream reads it through that
 * node's relay, which pulls it from the owner (starting an on-demand process there); the relay
 * ends once the player left, and the on-demand process stops on its owner after its idle time.
 * A name no node publishes is refused at once; the pull route refuses strangers.
 */

const missing = natsMissing();
const enc = encodeURIComponent;
const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'];

/** A process publishing FLV to its owner's RTMP server as `name` (on demand, 3 s idle, or running). */
function rtmpProcess(id: string, name: string, onDemand: boolean): Record<string, unknown> {
  return {
    id, reference: id, autostart: true, ...(onDemand ? { ondemand: { enable: true, idle_seconds: 3 } } : {}),
    input: [{ id: 'video', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: `{rtmp,name=${name}}`, options: [...X264, '-f', 'flv'] }],
  };
}

/** The state of `id` as `node` itself holds it (the hop header keeps the request there). */
async function localState(node: ProxyNode, id: string): Promise<any> {
  const r = await fetch(`${node.url}/api/v3/process/${enc(id)}/state`, { headers: { authorization: `Bearer ${node.token}`, [HOP_HEADER]: 'test' } });
  return r.json();
}

const table = (n: ProxyNode): StreamTable => n.kit.services.get(streamTableRef) as StreamTable;
const rtmpUrl = (n: ProxyNode, name: string): string => `rtmp://127.0.0.1:${(n.kit.services.get(rtmpServiceRef) as RtmpService).ports().rtmp}/${name}`;
function srtUrl(n: ProxyNode, name: string): string {
  const ph = n.kit.services.get(placeholdersRef) as { get(n: string): { value(s: string): string } };
  const port = Number(/:(\d+)\?/.exec(ph.get('srt').value('input'))![1]);
  return `srt://127.0.0.1:${port}?mode=caller&transtype=live&latency=400000&streamid=${name}`;
}

/** Creates `body` through `via`; the owner and the other node once the owner announces `name`. */
async function place(nodes: ProxyNode[], body: Record<string, unknown>, name: string): Promise<{ owner: ProxyNode; other: ProxyNode }> {
  const r = await nodes[0]!.kit.request('POST', '/api/v3/process', { token: nodes[0]!.token, body });
  if (r.status !== 200) throw new Error(`POST: ${r.status} ${r.text}`);
  const owners = await assigned(nodes[0]!, [body.id as string]);
  const owner = nodes.find((n) => n.id === owners[body.id as string])!;
  const other = nodes.find((n) => n !== owner)!;
  // the owner announces the name; the other node's view shows it
  await waitFor(async () => {
    const v = (await other.kit.request('GET', '/api/v3/cluster', { token: other.token })).body as { nodes: { id: string; streams?: string[] }[] };
    return v.nodes.find((n) => n.id === owner.id)?.streams?.includes(name);
  }, { timeout: 20_000, what: `${owner.id} announcing ${name}` });
  return { owner, other };
}

t.test('stream players on a node that does not own the process', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const more = {
    plugins: ['rtmp', 'srt', 'webrtc'],
    config: {
      rtmp: { enable: true, address: '127.0.0.1:0' }, srt: { enable: true, address: '127.0.0.1:0' },
      webrtc: { enable: true, bind_address: '127.0.0.1', token: WEBRTC_TOKEN },
    },
  };
  const a = await startNode(t, nats, 'a', 0, { replicas: 1 }, more);
  const b = await startNode(t, nats, 'b', 1, { replicas: 1 }, more);
  const nodes = [a, b];
  await waitFor(async () => {
    const views = await Promise.all(nodes.map(async (n) => (await n.kit.request('GET', '/api/v3/cluster', { token: n.token })).body));
    return views.every((v) => v.nodes?.length === 2 && v.leader && v.leader === views[0].leader);
  }, { timeout: 30_000, what: 'two nodes and a leader' });
  t.test('an RTMP player starts an on-demand process on its owner through a relay', (t) => onDemandRelay(t, nodes));
  t.test('RTMP and SRT players of a running process on the other node', (t) => runningRelay(t, nodes));
  t.test('a WHEP viewer of a running process on the other node', (t) => whepRelay(t, nodes));
  t.test('a name no node publishes is refused at once', (t) => unknownName(t, nodes));
  t.test('the pull route serves only the nodes of the cluster', (t) => strangers(t, nodes));
});

async function onDemandRelay(t: Test, nodes: ProxyNode[]): Promise<void> {
  const { owner, other } = await place(nodes, rtmpProcess('relcam', 'live/cam', true), 'live/cam');
  await waitFor(async () => (await localState(owner, 'relcam')).ondemand?.waiting === true, { timeout: 20_000, what: 'relcam waiting on its owner' });
  const t0 = performance.now();
  // a player of 60 frames (6 s at 10 fps): the relay is looked at while it plays
  const playing = readFrames(rtmpUrl(other, 'live/cam'), 60, 30_000);
  const relayed = await waitFor(() => table(other).get('live/cam'), { timeout: 20_000, what: `the relay on ${other.id}` });
  t.equal(relayed.publisher.protocol, 'cluster', `${other.id} publishes it through its relay`);
  t.match(table(owner).get('live/cam')?.readers, [{ peer: { protocol: 'cluster' }, format: 'mpegts' }], `the relay reads it on ${owner.id}`);
  const frames = await playing;
  const ms = performance.now() - t0;
  t.ok(frames >= 60, `the player on ${other.id} read ${frames} frames (${Math.round(ms)} ms)`);
  t.ok(ms < 20_000, 'within 20 s (the first of them within about 15 s)');
  t.match(await localState(owner, 'relcam'), { exec: 'running', ondemand: { started_by: 'stream' } }, `started on its owner ${owner.id} for the stream`);
  t.not((await localState(other, 'relcam')).exec, 'running', `not on ${other.id}`);
  // the player left: the relay ends after a few seconds, then the process stops for idleness
  await waitFor(() => table(other).get('live/cam') === undefined, { timeout: 15_000, what: `the relay on ${other.id} gone` });
  t.pass(`the relay on ${other.id} ended once the player left`);
  await waitFor(async () => {
    const s = await localState(owner, 'relcam');
    return s.ondemand?.waiting === true && s.exec === 'finished';
  }, { timeout: 25_000, what: `relcam waiting again on ${owner.id}` });
  t.pass(`the process stopped for idleness on ${owner.id} and waits again`);
}

async function runningRelay(t: Test, nodes: ProxyNode[]): Promise<void> {
  const { owner, other } = await place(nodes, rtmpProcess('relrun', 'live/run', false), 'live/run');
  // SRT first: its handshake admits the name before any relay runs (the relay's waiting names)
  t.notOk(table(other).get('live/run'), 'no relay before a player comes');
  await waitFor(() => table(other).demandNames().includes('live/run'), { what: `live/run among the demand names of ${other.id}` });
  t.ok(await readFrames(srtUrl(other, 'live/run'), 20, 20_000) >= 20, `an SRT player on ${other.id} reads the stream ${owner.id} runs`);
  t.ok(await readFrames(rtmpUrl(other, 'live/run'), 20, 20_000) >= 20, `an RTMP player on ${other.id} reads it too`);
  await waitFor(() => table(other).get('live/run') === undefined, { timeout: 15_000, what: `the relay on ${other.id} gone` });
  t.pass('the relay ended once the players left');
  t.equal((await localState(owner, 'relrun')).exec, 'running', `the process runs on ${owner.id} as before`);
  await waitFor(() => !table(owner).get('live/run')?.readers.length, { timeout: 5000, what: `no reader left on ${owner.id}` });
  t.pass('with no reader left on its owner');
}

async function whepRelay(t: Test, nodes: ProxyNode[]): Promise<void> {
  const owners = await assigned(nodes[0]!, ['relrun']);
  const other = nodes.find((n) => n.id !== owners.relrun)!;
  const v = await ndcViewer(t, other.url, 'live/run');
  t.equal(v.status, 201, `the WHEP offer on ${other.id} is answered`);
  await waitFor(() => v.video >= 30, { timeout: 30_000, what: `video at the WHEP viewer on ${other.id}` });
  t.equal(table(other).get('live/run')?.publisher.protocol, 'cluster', 'through the relay');
  v.close();
}

async function unknownName(t: Test, nodes: ProxyNode[]): Promise<void> {
  for (const n of nodes) {
    const t0 = performance.now();
    const frames = await readFrames(rtmpUrl(n, 'live/nobody'), 5, 10_000).catch(() => 0);
    const ms = performance.now() - t0;
    t.equal(frames, 0, `an RTMP player of a name no node publishes reads nothing on ${n.id}`);
    t.ok(ms < 5000, `refused at once (${Math.round(ms)} ms)`);
    t.notOk(table(n).get('live/nobody'), 'and nothing is relayed');
  }
}

async function strangers(t: Test, nodes: ProxyNode[]): Promise<void> {
  const [a] = nodes as [ProxyNode];
  const url = `${a.url}/api/v3/cluster/stream?name=${enc('live/run')}`;
  const plain = await fetch(url);
  t.equal(plain.status, 403, 'no hop header: 403');
  t.match(await plain.json(), { code: 403, details: ['only for the nodes of the cluster'] });
  const forged = await fetch(url, { headers: { [HOP_HEADER]: 'b', 'x-core-cluster-client': `127.0.0.1 http ${Date.now()} 00 - 00` } });
  t.equal(forged.status, 403, 'a hop header with a forged signature: 403');
  const token = await fetch(url, { headers: { authorization: `Bearer ${a.token}` } });
  t.equal(token.status, 403, 'a user credential is not enough: 403');
}
