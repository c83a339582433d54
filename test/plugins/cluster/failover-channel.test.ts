import t from 'tap';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, countByNode, DuplicateWatch, ffmpegs, killLeftovers, markerToken, placementOf, processBody, startCluster } from './failover-kit.ts';
import { natsMissing } from './nats.ts';

const missing = natsMissing();

/*
 * A restreamer-ui channel in a three-node cluster: its ingest, snapshot and egress processes
 * share one reference, so they run on one node, wherever each was created, and when that node
 * dies (SIGKILL, its ffmpegs with it) all three run together on one surviving node. Three
 * processes without a reference spread over the other nodes as before.
 */
t.test('a three-process channel lands on one node and fails over together', { skip: missing ?? false }, async (t) => {
  const token = markerToken();
  t.teardown(() => killLeftovers(token));
  const cluster = await startCluster(t);
  const channel = 'c6f1a2e0-34aa-4b5e-9d1c-3e2f7a9b0d11';
  const parts = [`restreamer-ui:ingest:${channel}`, `restreamer-ui:ingest:${channel}_snapshot`, `restreamer-ui:egress:youtube:${channel}`];
  const solos = ['solo:0', 'solo:1', 'solo:2'];
  const ids = [...parts, ...solos];
  const watch = new DuplicateWatch(token);
  t.teardown(() => watch.stop());
  // each part created through another node: the channel is a placement rule, not a node's
  for (const [i, id] of parts.entries()) await addProcess(cluster.nodes[i]!, processBody(id, token, channel));
  for (const id of solos) await addProcess(cluster.nodes[0]!, processBody(id, token));

  const first = await waitFor(() => {
    const where = placementOf(token, cluster.nodes, ids);
    return where && new Set(parts.map((id) => where.get(id))).size === 1 ? where : undefined;
  }, { timeout: 30_000, what: 'the six ffmpegs running, the channel\'s three on one node' });
  const home = first.get(parts[0]!)!;
  t.pass(`the channel runs on node ${home}`);
  const others = cluster.nodes.filter((n) => n.id !== home);
  const soloNodes = countByNode(new Map(solos.map((id) => [id, first.get(id)!])));
  t.same(Object.keys(soloNodes).sort(), others.map((n) => n.id).sort(), 'the processes without a reference spread over the other two nodes');
  const listed = (await others[0]!.request('GET', '/api/v3/cluster')).body as { assignments: { process_id: string; node_id: string }[] };
  t.same(listed.assignments.filter((a) => parts.includes(a.process_id)).map((a) => a.node_id), [home, home, home], 'core_assign gives all three to that node');

  // the channel's node dies: the service and its ffmpegs at once
  const dead = cluster.node(home);
  const onDead = ffmpegs(token).filter((f) => f.ppid === dead.app.child.pid);
  t.same(onDead.map((f) => f.id).sort(), [...parts].sort(), 'the dying node ran exactly the channel');
  dead.app.child.kill('SIGKILL');
  // what a SIGKILLed node leaves (its ffmpegs usually die with it: the confinement's pid namespace)
  for (const f of onDead) { try { process.kill(f.pid, 'SIGKILL'); } catch { /* gone already */ } }

  const after = await waitFor(() => {
    const where = placementOf(token, others, ids);
    return where && new Set(parts.map((id) => where.get(id))).size === 1 ? where : undefined;
  }, { timeout: 30_000, what: 'the channel running again, on one surviving node' });
  const next = after.get(parts[0]!)!;
  t.not(next, home, `the channel moved whole to node ${next}`);
  // and stays together: the leader's later steps (a rebalancing move of a single process) never split it
  await waitFor(async () => {
    const view = (await cluster.node(next).request('GET', '/api/v3/cluster')).body as { nodes: unknown[] };
    return view.nodes.length === 2;
  }, { timeout: 30_000, what: 'the dead node gone from the live view' });
  const settled = await waitFor(() => placementOf(token, others, ids), { timeout: 10_000, what: 'all six running once' });
  t.same(parts.map((id) => settled.get(id)), [next, next, next], 'the channel is still on one node');
  t.ok(solos.every((id) => others.some((n) => n.id === settled.get(id))), 'the processes without a reference run on the survivors');
  watch.stop();
  t.same(watch.duplicates, [], `never two copies of a process (${watch.samples} samples)`);
});
