import t, { type Test } from 'tap';
import { HOP_HEADER } from '../../../plugins/cluster/peer.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, startNatsCluster } from './nats.ts';
import { assigned, startNode, type ProxyNode } from './proxy-nodes.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { readFrames } from '../../core/process/ondemand/helpers.ts';

/*
 * On-demand processes in a cluster (issue 34), with real ffmpeg: an HLS request to a node that
 * does not own an on-demand process starts it on its owner (the node its channel is placed on)
 * and gets the playlist through the node asked, within 4 s; the node asked never runs it, nor
 * puts a waiting playlist of its own up. Found by the process id in the path, and by a HEAD probe
 * for a playlist whose name is not the id. With relaying off (`max_relays: 0`; relay.test.ts
 * covers the relay) an RTMP player on the other node is refused and starts nothing; on the owner
 * it starts the process.
 */

const missing = natsMissing();
const enc = encodeURIComponent;
const WAITING = '## on demand: waiting';
const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'];

/** An on-demand process publishing FLV to its owner's RTMP server as `name`. */
function onDemandRtmp(id: string, name: string): Record<string, unknown> {
  return {
    id, reference: id, autostart: true, ondemand: { enable: true, idle_seconds: 3 },
    input: [{ id: 'video', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: `{rtmp,name=${name}}`, options: [...X264, '-f', 'flv'] }],
  };
}

/** An on-demand HLS process into its owner's memfs as `<name>.m3u8` (3 s idle). */
function onDemand(id: string, reference: string, name: string): Record<string, unknown> {
  return {
    id, reference, autostart: true, ondemand: { enable: true, idle_seconds: 3 },
    input: [{ id: 'video', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{
      id: 'hls', address: `{memfs}/${name}.m3u8`,
      options: [...X264, '-f', 'hls', '-hls_time', '1', '-hls_list_size', '4', '-hls_flags', 'delete_segments',
        '-hls_segment_filename', `{memfs}/${name}_%03d.ts`, '-method', 'PUT'],
    }],
  };
}

/** The state of `id` as `node` itself holds it (the hop header keeps the request there). */
async function localState(node: ProxyNode, id: string): Promise<any> {
  const r = await fetch(`${node.url}/api/v3/process/${enc(id)}/state`, { headers: { authorization: `Bearer ${node.token}`, [HOP_HEADER]: 'test' } });
  return r.json();
}

/** Polls `url` like a player until ffmpeg's own playlist is served; the playlist and ms from `t0`. */
async function playUntilReal(url: string, t0: number): Promise<{ playlist: string; ms: number; waitingSeen: boolean }> {
  let waitingSeen = false;
  const playlist = await waitFor(async () => {
    const r = await fetch(url);
    const text = await r.text();
    if (r.status === 200 && text.includes(WAITING)) waitingSeen = true;
    return r.status === 200 && !text.includes(WAITING) && text.includes('#EXTINF') ? text : undefined;
  }, { what: `ffmpeg's playlist at ${url}`, timeout: 25_000, interval: 500 });
  return { playlist, ms: performance.now() - t0, waitingSeen };
}

t.test('on-demand processes in a cluster of two nodes', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const more = { plugins: ['rtmp'], config: { rtmp: { enable: true, address: '127.0.0.1:0' } } };
  // relaying off (`max_relays: 0`): a player on the other node is refused (relay.test.ts relays)
  const a = await startNode(t, nats, 'a', 0, { replicas: 1, max_relays: 0 }, more);
  const b = await startNode(t, nats, 'b', 1, { replicas: 1, max_relays: 0 }, more);
  const nodes = [a, b];
  await waitFor(async () => {
    const views = await Promise.all(nodes.map(async (n) => (await n.kit.request('GET', '/api/v3/cluster', { token: n.token })).body));
    return views.every((v) => v.nodes?.length === 2 && v.leader && v.leader === views[0].leader);
  }, { timeout: 30_000, what: 'two nodes and a leader' });
  t.test('an HLS reader asking any node starts it on the node that owns its channel', (t) => hlsAnyNode(t, nodes));
  t.test('without relays, an RTMP player on a node that does not own it is refused and starts nothing', (t) => rtmpOtherNode(t, nodes));
});

async function hlsAnyNode(t: Test, nodes: ProxyNode[]): Promise<void> {
  const [a, b] = nodes as [ProxyNode, ProxyNode];
  // one channel of two on-demand processes (one reference): the one named by its id, one not
  const ids = ['odcam', 'odwall'];
  for (const [id, name] of [['odcam', 'odcam'], ['odwall', 'wall-7']] as const) {
    const r = await b.kit.request('POST', '/api/v3/process', { token: b.token, body: onDemand(id, 'channel-od', name) });
    t.equal(r.status, 200, `${id} created through b`);
  }
  const owners = await assigned(a, ids);
  t.equal(owners.odcam, owners.odwall, 'the channel is placed on one node');
  const owner = nodes.find((n) => n.id === owners.odcam)!;
  const other = nodes.find((n) => n !== owner)!;
  for (const id of ids) {
    await waitFor(async () => (await localState(owner, id)).ondemand?.waiting === true, { timeout: 20_000, what: `${id} waiting on its owner` });
  }
  await waitFor(async () => (await owner.kit.request('GET', '/api/v3/fs/mem/wall-7.m3u8', { token: owner.token })).text.includes(WAITING), { what: 'the waiting playlist on the owner' });
  const localOther = await localState(other, 'odcam');
  t.notOk(localOther.ondemand?.waiting, 'the other node does not wait for readers of it');
  t.equal((await other.kit.request('GET', '/api/v3/fs/mem/odcam.m3u8', { token: other.token })).status, 404, 'nor puts a waiting playlist up');

  for (const [id, name, how] of [['odcam', 'odcam', 'by the id in the path'], ['odwall', 'wall-7', 'by a HEAD probe']] as const) {
    const t0 = performance.now();
    const { playlist, ms, waitingSeen } = await playUntilReal(`${other.url}/memfs/${name}.m3u8`, t0);
    t.ok(waitingSeen || ms < 1000, `${id}: the first answers through ${other.id} show the waiting playlist (${how})`);
    t.ok(ms < 4000, `${id}: ffmpeg's playlist through ${other.id} within 4 s of asking (${Math.round(ms)} ms)`);
    const onOwner = await localState(owner, id);
    t.match(onOwner, { exec: 'running', ondemand: { waiting: false, started_by: 'hls' } }, `${id}: started on its owner ${owner.id}`);
    t.not((await localState(other, id)).exec, 'running', `${id}: not on ${other.id}, the node asked`);
    const proxied = await (await fetch(`${other.url}/api/v3/process/${enc(id)}/state`, { headers: { authorization: `Bearer ${other.token}` } })).json() as any;
    t.equal(proxied.pid, onOwner.pid, `${id}: its state through ${other.id} is the owner's`);
    const seg = playlist.split('\n').find((l) => l.endsWith('.ts'))!;
    const segment = await fetch(`${other.url}/memfs/${seg}`);
    t.equal(segment.status, 200, `${id}: a segment through ${other.id}`);
    t.ok((await segment.arrayBuffer()).byteLength > 0);
  }
  // the readers left: each stops on its owner after its idle time and waits again there
  for (const id of ids) {
    await waitFor(async () => {
      const s = await localState(owner, id);
      return s.ondemand?.waiting === true && s.exec === 'finished';
    }, { timeout: 25_000, what: `${id} waiting again on ${owner.id}` });
  }
  t.pass('both stopped for idleness on their owner and wait again');
}

async function rtmpOtherNode(t: Test, nodes: ProxyNode[]): Promise<void> {
  const r = await nodes[0]!.kit.request('POST', '/api/v3/process', { token: nodes[0]!.token, body: onDemandRtmp('odrtmp', 'odrtmp') });
  t.equal(r.status, 200, 'created');
  const owners = await assigned(nodes[0]!, ['odrtmp']);
  const owner = nodes.find((n) => n.id === owners.odrtmp)!;
  const other = nodes.find((n) => n !== owner)!;
  await waitFor(async () => (await localState(owner, 'odrtmp')).ondemand?.waiting === true, { timeout: 20_000, what: 'odrtmp waiting on its owner' });
  const port = (n: ProxyNode) => (n.kit.services.get(rtmpServiceRef) as RtmpService).ports().rtmp;
  const t0 = performance.now();
  const refused = await readFrames(`rtmp://127.0.0.1:${port(other)}/odrtmp`, 5, 10_000).catch(() => 0);
  t.equal(refused, 0, `the player on ${other.id} reads nothing (${Math.round(performance.now() - t0)} ms)`);
  t.match(await localState(owner, 'odrtmp'), { exec: 'finished', ondemand: { waiting: true } }, 'nor started it on the owner');
  t.ok(await readFrames(`rtmp://127.0.0.1:${port(owner)}/odrtmp`, 10) >= 10, `a player on the owner ${owner.id} starts it and reads`);
  t.match(await localState(owner, 'odrtmp'), { ondemand: { started_by: 'stream' } });
}
