import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DuplicateWatch } from '../plugins/cluster/failover-kit.ts';
import { natsMissing } from '../plugins/cluster/nats.ts';
import { SseClient } from '../plugins/events/sse-client.ts';
import { ndcViewer, withMedia } from '../plugins/webrtc/helpers.ts';
import { camera, egressProcess, ingestProcess, pythonConfigBody, settingsLoad, settingsSave } from './clients.ts';
import {
  agreed, channelNode, journeyFfmpegs, killNode, startClusterJourney, startNode, stopNode, view,
  type ClusterJourney, type ClusterNode,
} from './cluster-kit.ts';
import { ADMIN, rtmpUrl, srtUrl, tracks, tracksOnceLive, waitFor, WEBRTC_TOKEN } from './kit.ts';

/*
 * Issue 44.6, the cluster's journey: three nodes, each the journey's service (the CLI, every
 * built-in plugin on, auth and tokens) with the cluster plugin, on one real nats-server. A channel
 * made on one node as restreamer-ui makes it (its ingest with the tee, its two egress processes,
 * its metadata) runs on exactly one node; its HLS is served by every node, its publication is read
 * on the others (the relay), a camera on one node is read on another, and every node answers the
 * process list, state and report alike. It is stopped and started from two other nodes,
 * restreamer-ui saves its Settings on every node, the Python client updates and reloads the
 * channel's node. Its node stopped with SIGTERM, then another killed with SIGKILL: the channel runs
 * again elsewhere with its config and metadata, the nodes rejoin when started again (an egress
 * deleted while one was away stays deleted), and after nats-server was down longer than a ttl the
 * cluster heals. The process table is sampled every 100 ms from start to end: no process of the
 * channel ever runs twice.
 */

const missing = natsMissing();
const CHANNEL = randomUUID();
const INGEST = `restreamer-ui:ingest:${CHANNEL}`;
const EGRESS = { rtmp: `restreamer-ui:egress:rtmp:${CHANNEL}`, srt: `restreamer-ui:egress:srt:${CHANNEL}` };
const FILES = { rtmp: `egress-${CHANNEL}.flv`, srt: `egress-${CHANNEL}.ts` };
const IDS = [INGEST, EGRESS.rtmp, EGRESS.srt];
/** What only each process's own ffmpeg has on its command line. */
const MARKERS = { [INGEST]: `/${CHANNEL}.m3u8`, [EGRESS.rtmp]: FILES.rtmp, [EGRESS.srt]: FILES.srt };
const META = { name: 'Cluster channel', meta: { author: { name: 'journey' } }, control: { hls: { segmentDuration: 2 } } };
const BOTH = ['video', 'audio'];
const enc = encodeURIComponent;

/** The journey's state between its steps: the node the channel runs on. */
interface Run { cj: ClusterJourney; owner: ClusterNode }

t.test('a channel on a three-node cluster, driven as its clients drive it, through a stop, a crash and a NATS restart', { skip: missing ?? false }, async (t) => {
  const cj = await startClusterJourney(t, ['a', 'b', 'c']);
  const watch = new DuplicateWatch(() => journeyFfmpegs(MARKERS));
  t.teardown(() => {
    watch.stop();
    // a killed node's ffmpegs die with it; should one not, it goes here
    for (const f of journeyFfmpegs(MARKERS)) { try { process.kill(f.pid, 'SIGKILL'); } catch { /* gone */ } }
  });
  const run: Run = { cj, owner: cj.nodes[0]! };
  await t.test('every node shows the cluster: three nodes, one leader, no process yet', (t) => formed(t, cj));
  await t.test('restreamer-ui makes a channel on a: it runs on exactly one node', (t) => create(t, run));
  await t.test('its HLS is served by every node', (t) => hlsEverywhere(t, run));
  await t.test('its publication is read on the other nodes, a camera on one node on another', (t) => relays(t, run));
  await t.test('every node answers the process list and state alike', (t) => sameAnswers(t, cj));
  await t.test('the channel stopped and started again from two other nodes', (t) => commands(t, run));
  await t.test('restreamer-ui saves its Settings on every node', async (t) => { for (const n of cj.nodes) await saveSettings(t, n); });
  await t.test('the Python client updates the config of the channel\'s node and reloads it', (t) => pythonReload(t, run));
  await t.test('the channel\'s node stopped (SIGTERM): the channel runs on another, config and metadata kept', (t) => handover(t, run, 'stop'));
  await t.test('the stopped node started again: it rejoins with its saved config', (t) => rejoin(t, run));
  await t.test('the channel\'s node killed (SIGKILL): the channel runs on another', (t) => handover(t, run, 'kill'));
  await t.test('an egress removed while the killed node is away: it rejoins without it', (t) => removedWhileAway(t, run));
  await t.test('nats-server restarted: the cluster heals and the channel runs once', (t) => natsRestart(t, run));
  watch.stop();
  t.ok(watch.samples > 100, `the process table was sampled ${watch.samples} times`);
  t.same(watch.duplicates, [], 'no process of the channel ever ran twice');
});

async function formed(t: Test, cj: ClusterJourney): Promise<void> {
  const leader = await agreed(cj);
  for (const n of cj.nodes) {
    const { res, body } = await view(n);
    t.equal(res.status, 200, `GET /api/v3/cluster on ${n.id}`);
    t.match(body, { node_id: n.id, leader, assignments: [], health: { nats: 'connected' } }, `${n.id}: itself, the leader ${leader}, connected`);
    t.same(body.nodes.map((x) => x.id).sort(), ['a', 'b', 'c'], `${n.id} sees the three nodes`);
    const self = body.nodes.find((x) => x.id === n.id)!;
    t.match(self.api_address, new RegExp(`^http://\\S+:${n.j.ports.http}$`), `${n.id} announces its API address`);
    const list = await n.j.run.req('GET', `/api/v3/process?idpattern=${enc('restreamer-ui:*')}&filter=config,state,metadata`);
    t.same([list.status, list.body], [200, []], `${n.id}: no channel yet`);
  }
}

async function create(t: Test, run: Run): Promise<void> {
  const [a, b] = run.cj.nodes as [ClusterNode, ClusterNode];
  const since = Date.now();
  const add = await a.j.run.req('POST', '/api/v3/process', { body: ingestProcess(CHANNEL) });
  t.equal(add.status, 200, `POST /api/v3/process on a: the ingest (${add.text.slice(0, 300)})`);
  t.equal(add.body.id, INGEST);
  const meta = await a.j.run.req('PUT', `/api/v3/process/${enc(INGEST)}/metadata/restreamer-ui`, { body: META });
  t.same([meta.status, meta.body], [200, META], 'PUT its metadata on a');
  for (const kind of ['rtmp', 'srt'] as const) {
    const r = await b.j.run.req('POST', '/api/v3/process', { body: egressProcess(CHANNEL, kind, FILES[kind]) });
    t.equal(r.status, 200, `POST /api/v3/process on b: the ${kind} egress (${r.text.slice(0, 200)})`);
  }
  run.owner = await channelNode(run.cj, MARKERS, 'the channel\'s three ffmpegs, once each, on one node');
  t.pass(`the ingest and its two egress processes run once each, all on ${run.owner.id}`);
  await assignedTo(t, run);
  await egressWrites(t, run.owner, since);
}

/** Every running node's `GET /api/v3/cluster` assigns the channel to its owner (each reads `core_assign` once a tick). */
async function assignedTo(t: Test, run: Run): Promise<void> {
  for (const n of run.cj.up()) {
    const mine = async () => (await view(n)).body.assignments.filter((x) => IDS.includes(x.process_id)).map((x) => x.node_id);
    const assigned = await waitFor(async () => ((await mine()).join() === [run.owner.id, run.owner.id, run.owner.id].join() ? mine() : undefined),
      { timeout: 10_000, what: `${n.id} assigning the channel to ${run.owner.id}` }).catch(() => mine());
    t.same(assigned, [run.owner.id, run.owner.id, run.owner.id], `GET /api/v3/cluster on ${n.id} assigns the channel to ${run.owner.id}`);
  }
}

/** The egress processes on `owner` write their files there (since `since`, ms), video #0 and audio #1. */
async function egressWrites(t: Test, owner: ClusterNode, since: number): Promise<void> {
  for (const kind of ['rtmp', 'srt'] as const) {
    const file = join(owner.j.dir, 'disk', FILES[kind]);
    await waitFor(async () => { const s = await stat(file); return s.mtimeMs > since && s.size > 30_000; },
      { timeout: 40_000, what: `the ${kind} egress writing on ${owner.id}` });
    t.same(await tracks(t, file), BOTH, `the ${kind} egress on ${owner.id} reads the publication of its own node: video #0, audio #1`);
  }
}

/** The channel's playlist as a player gets it from `n` (the sessions plugin answers a variant with a session id first). */
async function playlist(n: ClusterNode): Promise<string> {
  return waitFor(async () => {
    let r = await n.j.run.req('GET', `/memfs/${CHANNEL}.m3u8`, { token: '' });
    const session = /^(\S+\.m3u8\?session=\S+)$/m.exec(r.text)?.[1];
    if (r.status === 200 && session) r = await n.j.run.req('GET', `/memfs/${session}`, { token: '' });
    return r.status === 200 && new RegExp(`${CHANNEL}_\\d{4}\\.ts`).test(r.text) ? r.text : undefined;
  }, { timeout: 40_000, what: `the channel's HLS playlist on ${n.id}` });
}

async function hlsEverywhere(t: Test, run: Run): Promise<void> {
  for (const n of run.cj.up()) {
    const segment = new RegExp(`${CHANNEL}_\\d{4}\\.ts`).exec(await playlist(n))![0];
    const seg = await fetch(`${n.j.run.url}/memfs/${segment}`);
    t.equal(seg.status, 200, `GET /memfs/${segment} on ${n.id}${n === run.owner ? ' (the owner)' : ''}`);
    t.equal(seg.headers.get('content-type'), 'video/MP2T', 'an MPEG-TS segment');
    await seg.arrayBuffer();
  }
  const other = run.cj.up().find((n) => n !== run.owner)!;
  t.same(await tracks(t, `${other.j.run.url}/memfs/${CHANNEL}.m3u8`), BOTH, `played over HLS from ${other.id}: video #0, audio #1`);
}

async function relays(t: Test, run: Run): Promise<void> {
  const [x, y] = run.cj.up().filter((n) => n !== run.owner) as [ClusterNode, ClusterNode];
  t.same(await tracksOnceLive(t, rtmpUrl(x.j, `${CHANNEL}.stream`)), BOTH, `the channel read over RTMP on ${x.id}: video #0, audio #1`);
  t.same(await tracksOnceLive(t, srtUrl(y.j, CHANNEL)), BOTH, `the channel read over SRT on ${y.id}: video #0, audio #1`);
  const first = await ndcViewer(t, x.j.run.url, `${CHANNEL}.stream`, WEBRTC_TOKEN);
  t.equal(first.status, 201, `WHEP of the channel on ${x.id}: 201 with the answer`);
  const [viewer] = await withMedia(t, x.j.run.url, `${CHANNEL}.stream`, [first], 20, WEBRTC_TOKEN, 20);
  t.pass(`a WHEP viewer on ${x.id} gets the channel's video and audio`);
  viewer!.close();
  const name = `live/cam-${CHANNEL.slice(0, 8)}`;
  const cam = camera(t, rtmpUrl(x.j, name));
  t.same(await tracksOnceLive(t, srtUrl(y.j, name)), BOTH, `a camera publishing over RTMP on ${x.id} is read over SRT on ${y.id}`);
  t.same(await tracksOnceLive(t, rtmpUrl(run.owner.j, name)), BOTH, `and over RTMP on ${run.owner.id}`);
  await cam.stop();
}

/** The channel's processes as `n` lists them, without what changes from one moment to the next. */
async function listed(n: ClusterNode): Promise<unknown[]> {
  const r = await n.j.run.req('GET', `/api/v3/process?idpattern=${enc('restreamer-ui:*')}&filter=config,state,metadata`);
  if (r.status !== 200) throw new Error(`GET /api/v3/process on ${n.id}: ${r.status} ${r.text}`);
  return (r.body as { id: string; reference: string; config: unknown; metadata: unknown; state: { exec: string; order: string; command: string[] } }[])
    .map((p) => ({ id: p.id, reference: p.reference, config: p.config, metadata: p.metadata, exec: p.state.exec, order: p.state.order, command: p.state.command }))
    .sort((p, q) => (p.id < q.id ? -1 : 1));
}

/** JSON with every object's keys sorted: the answers of two nodes may order keys differently (a proxied one is the owner's JSON). */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x)
    ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => (p < q ? -1 : 1))) : x));
}

/** Every running node lists the channel alike, running, and answers its state alike (its owner's). */
async function sameAnswers(t: Test, cj: ClusterJourney): Promise<void> {
  const alike = (all: unknown[][]) => all.every((l) => l.length === 3 && l.every((p) => (p as { exec: string }).exec === 'running'))
    && all.every((l) => canonical(l) === canonical(all[0]));
  const lists = await waitFor(async () => {
    const all = await Promise.all(cj.up().map(listed));
    return alike(all) ? all : undefined;
  }, { timeout: 30_000, what: 'the same running channel listed by every node' }).catch(() => Promise.all(cj.up().map(listed)));
  // when they differ: each list against the first shows how
  for (const [i, n] of cj.up().entries()) t.same(lists[i], lists[0], `GET /api/v3/process on ${n.id} lists the channel as ${cj.up()[0]!.id} does`);
  t.same(lists[0]!.map((p) => (p as { id: string }).id), [...IDS].sort(), `the same three processes on ${cj.up().map((n) => n.id).join(', ')}`);
  t.ok(lists[0]!.every((p) => (p as { exec: string }).exec === 'running'), 'running');
  t.match(lists[0]!.find((p) => (p as { id: string }).id === INGEST), { reference: CHANNEL, metadata: { 'restreamer-ui': META }, order: 'start' }, 'with the channel\'s reference and metadata');
  for (const id of IDS) {
    await sameFromEvery(t, cj, `/api/v3/process/${enc(id)}/state`, (b) => [b.exec, b.order, b.command], 'exec, order and command line');
    await sameFromEvery(t, cj, `/api/v3/process/${enc(id)}/report`, (b) => [b.created_at, b.prelude], 'run\'s report (its start and prelude)');
  }
}

/** `path` answers 200 on every running node, the same `part` of the body (polled: an egress may be between two runs). */
async function sameFromEvery(t: Test, cj: ClusterJourney, path: string, part: (body: any) => unknown, what: string): Promise<void> {
  const ask = () => Promise.all(cj.up().map((n) => n.j.run.req('GET', path)));
  const alike = (rs: { status: number; body: unknown }[]) => rs.every((r) => r.status === 200) && new Set(rs.map((r) => canonical(part(r.body)))).size === 1;
  const answers = await waitFor(async () => { const rs = await ask(); return alike(rs) ? rs : undefined; }, { timeout: 15_000, what: `the same ${what}` }).catch(ask);
  t.same(answers.map((r) => r.status), answers.map(() => 200), `GET ${path} on every node`);
  for (const r of answers.slice(1)) t.same(part(r.body), part(answers[0]!.body), `the same ${what} from every node`);
}

/** restreamer-ui's stop and start buttons, on two nodes that do not run the channel. */
async function commands(t: Test, run: Run): Promise<void> {
  const [x, y] = run.cj.up().filter((n) => n !== run.owner) as [ClusterNode, ClusterNode];
  const stop = await x.j.run.req('PUT', `/api/v3/process/${enc(INGEST)}/command`, { body: { command: 'stop' } });
  t.same([stop.status, stop.body], [200, 'OK'], `PUT .../command stop on ${x.id}`);
  await waitFor(() => journeyFfmpegs({ [INGEST]: MARKERS[INGEST]! }).length === 0, { timeout: 20_000, what: 'the ingest\'s ffmpeg gone' });
  t.pass(`the ingest's ffmpeg on ${run.owner.id} ended`);
  const states = await waitFor(async () => {
    const all = await Promise.all(run.cj.up().map(async (n) => (await n.j.run.req('GET', `/api/v3/process/${enc(INGEST)}/state`)).body));
    // finished (ffmpeg ends on SIGINT), or killed when it did not in time on a busy box
    return all.every((s) => s.order === 'stop' && ['finished', 'killed'].includes(s.exec) && s.exec === all[0].exec) ? all : undefined;
  }, { timeout: 20_000, what: 'every node answering the ingest stopped' }).catch(() => []);
  t.equal(states.length, 3, `every node answers its state alike: order stop, exec ${states[0]?.exec}`);
  const start = await y.j.run.req('PUT', `/api/v3/process/${enc(INGEST)}/command`, { body: { command: 'start' } });
  t.same([start.status, start.body], [200, 'OK'], `PUT .../command start on ${y.id}`);
  const owner = await channelNode(run.cj, MARKERS, 'the channel running again, together');
  t.equal(owner, run.owner, `the ingest runs again with its egress processes on ${run.owner.id}`);
  await sameAnswers(t, run.cj);
}

/** The Python client's first step on the channel's node: a partial config PUT, then a reload of the service. */
async function pythonReload(t: Test, run: Run): Promise<void> {
  const n = run.owner;
  const put = await n.j.run.req('PUT', '/api/v3/config', { body: pythonConfigBody(ADMIN.username, ADMIN.password) });
  t.equal(put.status, 200, `the partial PUT /api/v3/config on ${n.id} (${put.text.slice(0, 300)})`);
  const reload = await n.j.run.req('GET', '/api/v3/config/reload');
  t.same([reload.status, reload.body], [200, 'OK'], 'GET /api/v3/config/reload');
  n.j.run.token = await waitFor(() => n.j.run.login().catch(() => undefined), { timeout: 30_000, what: `${n.id} reloaded` });
  t.equal((await n.j.run.req('GET', '/api/v3/config')).body.config.name, `journey-${n.id}-saved`, 'the reloaded service runs the stored config');
  await agreed(run.cj);
  run.owner = await channelNode(run.cj, MARKERS, 'the channel running once after the reload', 60_000);
  t.pass(`the channel runs once, on ${run.owner.id}`);
  await sameAnswers(t, run.cj);
}

async function saveSettings(t: Test, n: ClusterNode): Promise<void> {
  const form = settingsLoad((await n.j.run.req('GET', '/api/v3/config')).body.config);
  form.name = `journey-${n.id}-saved`;
  const put = await n.j.run.req('PUT', '/api/v3/config', { body: settingsSave(form) });
  t.equal(put.status, 200, `the Settings save on ${n.id} is stored (${put.text.slice(0, 300)})`);
  t.equal((await n.j.run.req('GET', '/api/v3/config')).body.config.name, form.name, 'GET /api/v3/config shows it');
}

/** The channel's node leaves (`stop`: SIGTERM, `kill`: SIGKILL); the channel runs again on another, as it was. */
async function handover(t: Test, run: Run, how: 'stop' | 'kill'): Promise<void> {
  const gone = run.owner;
  const pid = gone.j.run.child.pid;
  const since = Date.now();
  const before = await listed(run.cj.up().find((n) => n !== gone)!);
  if (how === 'stop') {
    t.equal(await stopNode(gone), 0, `${gone.id} exits with 0 on SIGTERM`);
    t.same(journeyFfmpegs(MARKERS).filter((f) => f.ppid === pid), [], `${gone.id} stopped its ffmpegs on the way out`);
  } else {
    const pids = journeyFfmpegs(MARKERS).filter((f) => f.ppid === pid).map((f) => f.pid);
    await killNode(gone);
    // a zombie (state Z, not reaped yet) is dead too
    const alive = (p: number) => { try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${p}/stat`, 'utf8')); } catch { return false; } };
    // before its leases can expire (ttl_sec 4): the confined children die with the service
    await waitFor(() => !pids.some(alive), { timeout: 4000, what: `the ffmpegs of ${gone.id} gone with it` });
    t.equal(pids.length, 3, `${gone.id} killed: its three ffmpegs died with it`);
  }
  run.owner = await channelNode(run.cj, MARKERS, `the channel running again after ${gone.id} left`, 60_000);
  t.not(run.owner.id, gone.id, `the channel's three processes run again, once each, all on ${run.owner.id}`);
  await agreed(run.cj);
  await assignedTo(t, run);
  await sameAnswers(t, run.cj);
  const after = await listed(run.owner);
  const kept = (l: unknown[]) => l.map((p) => { const { id, reference, config, metadata } = p as Record<string, unknown>; return { id, reference, config, metadata }; });
  t.same(kept(after), kept(before), 'every process\'s config and metadata as before');
  await clusterEvents(t, run.owner, gone);
  await egressWrites(t, run.owner, since);
  const other = run.cj.up().find((n) => n !== run.owner)!;
  t.ok(await playlist(other), `the HLS served by ${other.id} again`);
}

/** The events stream of the new owner tells what happened: the node left, the channel's processes owned there. */
async function clusterEvents(t: Test, owner: ClusterNode, gone: ClusterNode): Promise<void> {
  const sse = await SseClient.open(`${owner.j.run.url}/api/v3/events?last_event_id=0&types=cluster.*`, { authorization: `Bearer ${owner.j.run.token}` });
  t.teardown(() => sse.close());
  t.equal(sse.status, 200, `GET /api/v3/events on ${owner.id}`);
  await sse.next((e) => e.type === 'cluster.node.left' && e.subject.node === gone.id, `cluster.node.left of ${gone.id}`, 10_000);
  t.pass(`cluster.node.left of ${gone.id}`);
  for (const id of IDS) {
    await sse.next((e) => e.type === 'cluster.process.owned' && e.subject.process === id && e.subject.node === owner.id, `cluster.process.owned of ${id}`, 10_000);
  }
  t.pass(`cluster.process.owned of the channel's three processes by ${owner.id}`);
}

async function rejoin(t: Test, run: Run): Promise<void> {
  const back = run.cj.nodes.find((n) => !n.up)!;
  await startNode(back);
  await agreed(run.cj);
  t.pass(`${back.id}, stopped before, is a node of the cluster again`);
  t.equal((await back.j.run.req('GET', '/api/v3/config')).body.config.name, `journey-${back.id}-saved`, 'the Settings it saved before are its config');
  const list = await listed(back);
  t.same(list.map((p) => (p as { id: string }).id), [...IDS].sort(), `${back.id} lists the channel`);
  t.match(list.find((p) => (p as { id: string }).id === INGEST), { metadata: { 'restreamer-ui': META } }, 'with its metadata');
  t.equal(await channelNode(run.cj, MARKERS, 'the channel running once'), run.owner, `the channel stays on ${run.owner.id}`);
}

/**
 * restreamer-ui removes the SRT egress while the killed node (which ran it) is away; started again,
 * that node drops it from its own db (never resurrected, never run), then the egress is added again.
 */
async function removedWhileAway(t: Test, run: Run): Promise<void> {
  const back = run.cj.nodes.find((n) => !n.up)!;
  const del = await run.owner.j.run.req('DELETE', `/api/v3/process/${enc(EGRESS.srt)}`);
  t.same([del.status, del.body], [200, 'OK'], `DELETE the SRT egress on ${run.owner.id} while ${back.id} is away`);
  const rest = { [INGEST]: MARKERS[INGEST]!, [EGRESS.rtmp]: MARKERS[EGRESS.rtmp]! };
  await channelNode(run.cj, rest, 'the ingest and the RTMP egress alone');
  await startNode(back);
  await agreed(run.cj);
  t.pass(`${back.id}, killed before, is a node of the cluster again`);
  const gone = await waitFor(async () => {
    const ids = (await listed(back)).map((p) => (p as { id: string }).id);
    return ids.includes(EGRESS.srt) ? undefined : ids;
  }, { timeout: 20_000, what: `${back.id} dropping the deleted egress` }).catch(async () => (await listed(back)).map((p) => (p as { id: string }).id));
  t.same(gone, [EGRESS.rtmp, INGEST].sort(), `${back.id} lists the channel without the egress deleted while it was away`);
  for (const n of run.cj.up()) {
    const r = await n.j.run.req('GET', `/api/v3/process/${enc(EGRESS.srt)}/state`);
    t.equal(r.status, 404, `GET its state on ${n.id}: 404`);
  }
  t.equal(await channelNode(run.cj, rest, 'the channel running once'), run.owner, `the channel stays on ${run.owner.id}, the deleted egress nowhere`);
  const add = await back.j.run.req('POST', '/api/v3/process', { body: egressProcess(CHANNEL, 'srt', FILES.srt) });
  t.equal(add.status, 200, `the SRT egress added again on ${back.id}`);
  t.equal(await channelNode(run.cj, MARKERS, 'the channel with its SRT egress again'), run.owner, `it joins its channel on ${run.owner.id}`);
}

async function natsRestart(t: Test, run: Run): Promise<void> {
  await run.cj.nats.servers[0]!.restart(() => outage(t, run));
  t.pass('nats-server started again on its store');
  const leader = await agreed(run.cj);
  t.pass(`every node connected again, one leader (${leader})`);
  run.owner = await channelNode(run.cj, MARKERS, 'the channel running once after the NATS restart', 60_000);
  t.pass(`the channel runs once, on ${run.owner.id}`);
  await sameAnswers(t, run.cj);
  const meta = await run.owner.j.run.req('GET', `/api/v3/process/${enc(INGEST)}/metadata/restreamer-ui`);
  t.same([meta.status, meta.body], [200, META], 'the change refused during the outage changed nothing');
  for (const n of run.cj.up()) t.ok(await playlist(n), `its HLS served by ${n.id}`);
}

/** While nats-server is down (longer than a ttl: every lease and announcement expires there). */
async function outage(t: Test, run: Run): Promise<void> {
  const down = Date.now();
  for (const n of run.cj.up()) {
    await waitFor(async () => (await view(n)).body.health.nats === 'disconnected', { timeout: 10_000, what: `${n.id} seeing NATS gone` });
  }
  t.pass('nats-server stopped (SIGTERM): every node\'s GET /api/v3/cluster says health.nats disconnected');
  const t0 = Date.now();
  const put = await run.owner.j.run.req('PUT', `/api/v3/process/${enc(INGEST)}/metadata/restreamer-ui`, { body: { ...META, name: 'changed' } });
  t.same([put.status, put.body.code], [503, 503], `a change on ${run.owner.id} meanwhile: 503 in ${Date.now() - t0} ms (${put.text.slice(0, 200)})`);
  t.match(put.body, { message: String, details: Array }, 'with the Error body');
  await waitFor(() => journeyFfmpegs(MARKERS).length === 0, { timeout: 10_000, what: 'the channel\'s ffmpegs ending at their lease deadline' });
  t.pass('on_quorum_loss stop: the channel\'s ffmpegs ended at their lease deadline');
  const list = await run.owner.j.run.req('GET', `/api/v3/process?idpattern=${enc('restreamer-ui:*')}`);
  t.same([list.status, list.body.map?.((p: { id: string }) => p.id).sort()], [200, [...IDS].sort()], 'the process list still answers');
  // down for longer than ttl_sec (4 s): the server drops every lease and announcement when it comes back
  await new Promise((r) => setTimeout(r, Math.max(0, 5000 - (Date.now() - down))));
}
