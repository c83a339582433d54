import t from 'tap';
import { processKey } from '../../../plugins/cluster/keys.ts';
import { ProcessStore } from '../../../plugins/cluster/process-store.ts';
import { createTestApp, type TestApp } from '../../../testkit/index.ts';
import { eventsRef, type CoreEvent } from '../../../sdk/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();

interface View { leader: string | null; nodes: { id: string }[]; assignments: { process_id: string; node_id: string }[] }

const perNode = (v: View): Record<string, number> => {
  const c: Record<string, number> = {};
  for (const a of v.assignments) c[a.node_id] = (c[a.node_id] ?? 0) + 1;
  return c;
};

t.test('the leader places shared processes over the nodes; every node shows the same assignments', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(3);
  t.teardown(() => nats.stop());
  const kits = new Map<string, TestApp>();
  /** The cluster events each node emitted, from its own event stream. */
  const seen = new Map<string, CoreEvent[]>();
  for (const [i, id] of ['a', 'b', 'c'].entries()) {
    const kit = await createTestApp({ t, plugins: ['events', { name: 'cluster', config: { servers: [nats.servers[i].url], node_id: id, ttl_sec: 3, announce_sec: 1, replicas: 3 } }] });
    const list: CoreEvent[] = [];
    seen.set(id, list);
    const sub = kit.services.get(eventsRef).subscribe({ types: ['cluster.*'] }, undefined, (e) => { list.push(e); });
    t.teardown(() => sub.close());
    await kit.listen();
    kits.set(id, kit);
  }
  const emitted = (node: string, type: string, match: (e: CoreEvent) => boolean = () => true) => seen.get(node)!.some((e) => e.type === type && match(e));
  const views = async (): Promise<View[]> => Promise.all([...kits.values()].map(async (k) => (await k.request('GET', '/api/v3/cluster')).body as View));
  /** The views once all agree on a leader and on assignments matching `ok`. */
  const settled = (ok: (v: View) => boolean) => async (): Promise<View | undefined> => {
    const vs = await views();
    const same = vs.every((v) => v.leader && v.leader === vs[0].leader && JSON.stringify(v.assignments) === JSON.stringify(vs[0].assignments));
    return same && ok(vs[0]) ? vs[0] : undefined;
  };
  await waitFor(settled((v) => v.nodes.length === 3), { timeout: 30_000, what: 'three nodes and a leader' });

  // processes as the engine will write them (ids NATS would refuse as keys), one of them stopped
  const { kv } = await openBucket(t, nats.servers[0].url, 'processes', 3000, 3);
  const store = new ProcessStore(kv);
  const ids = Array.from({ length: 6 }, (_, i) => `restreamer-ui:ingest:${i}`);
  for (const id of ids) await store.create({ id, order: 'start', config: { id }, metadata: null, updated_at: 1 });
  await store.create({ id: 'stopped one', order: 'stop', config: {}, metadata: null, updated_at: 1 });

  const spread = await waitFor(settled((v) => v.assignments.length === 6 && Object.values(perNode(v)).join() === '2,2,2'),
    { timeout: 30_000, what: 'six processes, two per node, the same on every node' });
  t.same(spread.assignments.map((a) => a.process_id).sort(), ids, 'the running processes are assigned, the stopped one is not');
  // each assigned node takes the ownership lease of its processes
  const { kv: owners } = await openBucket(t, nats.servers[0].url, 'owners', 3000, 3);
  const owned = (v: View) => async (): Promise<boolean> => {
    for (const a of v.assignments) {
      const e = await owners.get(processKey(a.process_id));
      if (e?.operation !== 'PUT' || e.json<{ node: string }>().node !== a.node_id) return false;
    }
    return true;
  };
  await waitFor(owned(spread), { timeout: 30_000, what: 'every lease held by the assigned node' });
  t.pass('core_owners matches the assignments');
  // the events stream of each node says what it took, and who leads
  await waitFor(() => spread.assignments.every((a) => emitted(a.node_id, 'cluster.process.owned', (e) => e.subject.process === a.process_id && e.subject.node === a.node_id)),
    { timeout: 30_000, what: 'cluster.process.owned on each owner' });
  t.pass('each owner emitted cluster.process.owned for its processes');
  t.ok(emitted(spread.leader!, 'cluster.leader', (e) => e.payload.change === 'took'), 'the leader emitted cluster.leader took');
  for (const id of kits.keys()) {
    t.same([...new Set(seen.get(id)!.filter((e) => e.type === 'cluster.node.joined').map((e) => e.subject.node))].sort(), ['a', 'b', 'c'], `${id} saw the three nodes join`);
  }

  // the leader's node leaves: another leads and re-places its processes on the two left
  const leaving = spread.leader!;
  await kits.get(leaving)!.close();
  kits.delete(leaving);
  const after = await waitFor(settled((v) => v.leader !== leaving && v.assignments.length === 6 && Object.values(perNode(v)).join() === '3,3'),
    { timeout: 30_000, what: 'the six processes on the two remaining nodes' });
  t.notOk(after.assignments.some((a) => a.node_id === leaving), 'nothing left on the departed node');
  const moved = spread.assignments.filter((a) => after.assignments.find((b) => b.process_id === a.process_id)!.node_id !== a.node_id);
  t.same(moved.map((a) => a.node_id), [leaving, leaving], 'only the departed node\'s two processes moved');
  // the departed node released its leases on the way out: the new owners hold them at once
  await waitFor(owned(after), { timeout: 30_000, what: 'the moved leases held by their new nodes' });
  t.pass('core_owners follows the failover');
  await waitFor(() => moved.every((m) => {
    const now = after.assignments.find((b) => b.process_id === m.process_id)!.node_id;
    return emitted(now, 'cluster.process.owned', (e) => e.subject.process === m.process_id);
  }) && [...kits.keys()].every((id) => emitted(id, 'cluster.node.left', (e) => e.subject.node === leaving)), { timeout: 30_000, what: 'owned events of the moved processes, node.left on the others' });
  t.pass('the new owners emitted cluster.process.owned; the others saw the leader leave (cluster.node.left)');
});
