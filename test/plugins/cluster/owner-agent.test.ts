import t from 'tap';
import { OwnerAgent } from '../../../plugins/cluster/owner-agent.ts';
import { waitFor } from '../../helpers/wait.ts';
import { natsMissing, openBucket, startNatsCluster } from './nats.ts';

const missing = natsMissing();
const TTL = 4000;

t.test('owner agents on three partitionable nodes: a process never runs twice', { skip: missing ?? false }, async (t) => {
  const nats = await startNatsCluster(3);
  t.teardown(() => nats.stop());
  // the "process table" of the whole cluster: who runs what, and every start and stop in order
  const table = new Map<string, Set<string>>();
  const log: { node: string; id: string; what: string }[] = [];
  const violations: string[] = [];
  const agents = new Map<string, OwnerAgent>();
  for (const [i, node] of ['a', 'b', 'c'].entries()) {
    const { kv } = await openBucket(t, nats.servers[i].url, 'owners', TTL, 3);
    agents.set(node, new OwnerAgent(kv, { node, ttlMs: TTL, hooks: {
      start: (id) => {
        const on = table.get(id) ?? new Set();
        if (on.size > 0) violations.push(`${id} started on ${node} while running on ${[...on]}`);
        on.add(node);
        table.set(id, on);
        log.push({ node, id, what: 'start' });
      },
      stop: (id, why) => { table.get(id)?.delete(node); log.push({ node, id, what: `stop:${why}` }); },
    } }));
  }
  t.teardown(() => Promise.all([...agents.values()].map((a) => a.close())));
  // the leader's side, simulated: the test sets the assignments, every agent applies them on a tick
  let assignments: Record<string, string> = { p1: 'a', p2: 'b', 'p:3': 'c' };
  // a partitioned node does not see new assignments (core_assign is out of its reach)
  const paused = new Set<string>();
  const seen = new Map<string, Record<string, string>>();
  const timer = setInterval(() => {
    for (const [node, a] of agents) {
      if (!paused.has(node)) seen.set(node, assignments);
      void a.apply(seen.get(node) ?? {});
    }
  }, 200);
  t.teardown(() => clearInterval(timer));
  const runs = (node: string, id: string): boolean => agents.get(node)!.running().includes(id);

  await waitFor(() => runs('a', 'p1') && runs('b', 'p2') && runs('c', 'p:3'), { timeout: 30_000, what: 'each node running its process' });

  // a planned move: a stops p1 before releasing it, only then b can acquire and start it
  assignments = { ...assignments, p1: 'b' };
  await waitFor(() => runs('b', 'p1'), { timeout: 30_000, what: 'p1 moved to b' });
  const p1 = log.filter((l) => l.id === 'p1').map((l) => `${l.node}:${l.what}`);
  t.same(p1.slice(p1.indexOf('b:start') - 1, p1.indexOf('b:start') + 1), ['a:stop:moved', 'b:start'], 'a stopped it (moved) right before b started it');

  // partition c: its lease deadline stops p:3 there before a can acquire and start it
  nats.servers[2].pause();
  paused.add('c');
  t.teardown(() => nats.servers[2].resume());
  assignments = { ...assignments, 'p:3': 'a' };
  await waitFor(() => runs('a', 'p:3'), { timeout: 30_000, what: 'p:3 running on a' });
  const p3 = log.filter((l) => l.id === 'p:3').map((l) => `${l.node}:${l.what}`);
  t.same(p3.slice(0, p3.indexOf('a:start') + 1), ['c:start', 'c:stop:deadline', 'a:start'],
    'the partitioned node stopped it (fenced) before a started it');

  // heal: c reconciles, runs nothing that moved, nothing is duplicated
  nats.servers[2].resume();
  await waitFor(async () => { await agents.get('c')!.reconnected(); return true; }, { timeout: 30_000, what: 'c reconciling' });
  paused.delete('c');
  assignments = { ...assignments, p4: 'c' };
  await waitFor(() => runs('c', 'p4'), { timeout: 30_000, what: 'c running a new process after the heal' });
  t.same(agents.get('c')!.running(), ['p4']);
  // (a lease may lapse and be taken back while NATS recovers from the pause: wait for the end state)
  const want = JSON.stringify({ p1: ['b'], p2: ['b'], p4: ['c'], 'p:3': ['a'] }); // ids sorted by code unit
  const now = (): string => JSON.stringify(Object.fromEntries([...table].sort(([x], [y]) => (x < y ? -1 : 1)).map(([id, on]) => [id, [...on]])));
  await waitFor(() => now() === want, { timeout: 30_000, what: `the table ${want}` }).catch((err) => {
    throw new Error(`${(err as Error).message}; it is ${now()}; log ${JSON.stringify(log)}`);
  });
  t.same(violations, [], 'no process ever started on a node while it ran on another');
});
