import t from 'tap';
import { ASSIGN_KEY, LeaderLoop, readAssignments } from '../../../plugins/cluster/leader.ts';
import type { PlacementNode, PlacementProcess } from '../../../plugins/cluster/placement.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();

t.test('the leader loop writes placements to core_assign with compare-and-swap', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(1);
  t.teardown(() => nats.stop());
  const { kv } = await openBucket(t, nats.servers[0].url, 'assign');
  const nodes: PlacementNode[] = [{ id: 'a', alive: true, maxProcesses: 0, load: 0 }, { id: 'b', alive: true, maxProcesses: 0, load: 0 }];
  const processes: PlacementProcess[] = [{ id: 'p:1', order: 'start' }, { id: 'p:2', order: 'start' }];
  let leading = false;
  const loop = new LeaderLoop(kv, { node: 'a', isLeader: () => leading, nodes: () => nodes, processes: () => processes });

  t.equal(await loop.step(), 'not-leader');
  t.equal(await kv.get(ASSIGN_KEY), null, 'a node that does not lead writes nothing');

  leading = true;
  t.equal(await loop.step(), 'written');
  const first = await readAssignments(kv);
  t.same(first.assignments, { 'p:1': 'a', 'p:2': 'b' });
  t.equal(await loop.step(), 'unchanged', 'an unchanged cluster is not rewritten');
  t.equal((await readAssignments(kv)).revision, first.revision);

  nodes[1] = { ...nodes[1]!, alive: false };
  t.equal(await loop.step(), 'written');
  t.same((await readAssignments(kv)).assignments, { 'p:1': 'a', 'p:2': 'a' }, 'the dead node\'s process failed over');
  nodes[1] = { ...nodes[1]!, alive: true };

  // the lease deadline passes between the read and the write: nothing is written
  let asked = 0;
  const lapsing = new LeaderLoop(kv, { node: 'a', isLeader: () => ++asked === 1, nodes: () => nodes, processes: () => processes });
  const before = (await readAssignments(kv)).revision;
  t.equal(await lapsing.step(), 'not-leader');
  t.equal((await readAssignments(kv)).revision, before, 'a lapsed leader does not write its step');

  // two nodes both believe they lead and read the same revision: only one write lands. b's
  // write waits at a gate until a has written, so the order is fixed, not left to timing.
  let reached!: () => void;
  const atGate = new Promise<void>((r) => { reached = r; });
  let open!: () => void;
  const gate = new Promise<void>((r) => { open = r; });
  const gated = new Proxy(kv, {
    get: (target, prop, recv) => prop === 'update'
      ? async (...args: Parameters<typeof kv.update>) => { reached(); await gate; return target.update(...args); }
      : Reflect.get(target, prop, recv),
  });
  const b = new LeaderLoop(gated, { node: 'b', isLeader: () => true, nodes: () => nodes, processes: () => processes });
  const a = new LeaderLoop(kv, { node: 'a', isLeader: () => true, nodes: () => nodes, processes: () => processes });
  const bStep = b.step();
  await atGate;
  t.equal(await a.step(), 'written', 'the first write lands');
  open();
  t.equal(await bStep, 'conflict', 'the second, at the same revision, is a conflict');
  t.equal(await loop.step(), 'unchanged', 'the loser re-reads and finds the placement done');
});
