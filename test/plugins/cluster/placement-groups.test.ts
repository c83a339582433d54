import t from 'tap';
import { placementProcess } from '../../../plugins/cluster/coordinator.ts';
import { place, type Assignments, type PlacementNode, type PlacementProcess } from '../../../plugins/cluster/placement.ts';

const node = (id: string, extra: Partial<PlacementNode> = {}): PlacementNode => ({ id, alive: true, maxProcesses: 0, load: 0, ...extra });
/** Processes of one channel: ids `<ref>:<part>`, all with reference `ref`. */
const channel = (ref: string, ...parts: string[]): PlacementProcess[] => parts.map((p) => ({ id: `${ref}:${p}`, order: 'start', reference: ref }));
const single = (...ids: string[]): PlacementProcess[] => ids.map((id) => ({ id, order: 'start', reference: '' }));
const show = (r: ReturnType<typeof place>): string[] => r.changes.map((x) => `${x.process}:${x.from ?? '-'}\u2192${x.to ?? '-'} ${x.reason}`);

interface Case {
  name: string;
  nodes: PlacementNode[];
  processes: PlacementProcess[];
  current: Assignments;
  want: Record<string, string>;
  changes?: string[];
  unplaced?: string[];
}

const ch = channel('ch', 'egress', 'ingest', 'snapshot');
const cases: Case[] = [
  { name: 'a new group lands on one node (largest first); ungrouped processes spread around it',
    nodes: [node('a'), node('b'), node('c')], processes: [...single('u1', 'u2'), ...ch], current: {},
    want: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a', u1: 'b', u2: 'c' } },
  { name: 'a new member joins its group\'s node, even the busiest; the group is never split to balance',
    nodes: [node('a'), node('b')], processes: [...ch, ...single('u1')],
    current: { 'ch:egress': 'b', 'ch:ingest': 'b', u1: 'a' },
    want: { 'ch:egress': 'b', 'ch:ingest': 'b', 'ch:snapshot': 'b', u1: 'a' }, changes: ['ch:snapshot:-\u2192b new'] },
  { name: 'a group whose node has no room for a new member moves whole to a node that has',
    nodes: [node('a', { maxProcesses: 3 }), node('b', { maxProcesses: 2 })], processes: ch,
    current: { 'ch:egress': 'b', 'ch:ingest': 'b' },
    want: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a' },
    changes: ['ch:egress:b\u2192a group', 'ch:ingest:b\u2192a group', 'ch:snapshot:-\u2192a new'] },
  { name: 'failover: the dead node\'s group moves whole to the node with the fewest processes (then one single move balances)',
    nodes: [node('a'), node('b', { alive: false }), node('c')], processes: [...ch, ...single('u1', 'u2', 'u3')],
    current: { 'ch:egress': 'b', 'ch:ingest': 'b', 'ch:snapshot': 'b', u1: 'a', u2: 'c', u3: 'c' },
    want: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a', u1: 'c', u2: 'c', u3: 'c' },
    changes: ['ch:egress:b\u2192a failover', 'ch:ingest:b\u2192a failover', 'ch:snapshot:b\u2192a failover', 'u1:a\u2192c rebalance'] },
  { name: 'failover goes where the whole group fits, not to the least busy node',
    nodes: [node('a', { maxProcesses: 2 }), node('b', { alive: false }), node('c', { maxProcesses: 5 })],
    processes: [...ch, ...single('u1', 'u2')], current: { 'ch:egress': 'b', 'ch:ingest': 'b', 'ch:snapshot': 'b', u1: 'c', u2: 'c' },
    want: { 'ch:egress': 'c', 'ch:ingest': 'c', 'ch:snapshot': 'c', u1: 'c', u2: 'a' },
    changes: ['ch:egress:b\u2192c failover', 'ch:ingest:b\u2192c failover', 'ch:snapshot:b\u2192c failover', 'u2:c\u2192a rebalance'] },
  { name: 'a group too big for any node: the node with the most room runs what fits, the rest is unplaced',
    nodes: [node('a', { maxProcesses: 2 }), node('b', { maxProcesses: 2 })], processes: ch, current: {},
    want: { 'ch:egress': 'a', 'ch:ingest': 'a' }, unplaced: ['ch:snapshot'] },
  { name: '... and stays so: nothing moves on the next call',
    nodes: [node('a', { maxProcesses: 2 }), node('b', { maxProcesses: 2 })], processes: ch, current: { 'ch:egress': 'a', 'ch:ingest': 'a' },
    want: { 'ch:egress': 'a', 'ch:ingest': 'a' }, changes: [], unplaced: ['ch:snapshot'] },
  { name: 'a too big group keeps the members that run where they are',
    nodes: [node('a', { maxProcesses: 2 }), node('b', { maxProcesses: 2 })], processes: ch, current: { 'ch:snapshot': 'b' },
    want: { 'ch:egress': 'b', 'ch:snapshot': 'b' }, changes: ['ch:egress:-\u2192b new'], unplaced: ['ch:ingest'] },
  { name: 'an empty reference is no group: those processes spread',
    nodes: [node('a'), node('b'), node('c')], processes: single('p1', 'p2', 'p3'), current: {},
    want: { p1: 'a', p2: 'b', p3: 'c' } },
  { name: 'the same reference in two domains is two groups',
    nodes: [node('a'), node('b')],
    processes: [{ id: 'x1', order: 'start', reference: 'r', domain: 'x' }, { id: 'x2', order: 'start', reference: 'r', domain: 'x' },
      { id: 'y1', order: 'start', reference: 'r', domain: 'y' }, { id: 'y2', order: 'start', reference: 'r', domain: 'y' }],
    current: {}, want: { x1: 'a', x2: 'a', y1: 'b', y2: 'b' } },
  { name: 'many groups spread over the nodes, each on one',
    nodes: [node('a'), node('b'), node('c')],
    processes: ['g1', 'g2', 'g3', 'g4', 'g5', 'g6'].flatMap((g) => channel(g, 'in', 'out')), current: {},
    want: { 'g1:in': 'a', 'g1:out': 'a', 'g2:in': 'b', 'g2:out': 'b', 'g3:in': 'c', 'g3:out': 'c',
      'g4:in': 'a', 'g4:out': 'a', 'g5:in': 'b', 'g5:out': 'b', 'g6:in': 'c', 'g6:out': 'c' } },
  { name: 'a group scattered by an older placement comes together on the node with most of it',
    nodes: [node('a'), node('b')], processes: ch, current: { 'ch:egress': 'b', 'ch:ingest': 'a', 'ch:snapshot': 'b' },
    want: { 'ch:egress': 'b', 'ch:ingest': 'b', 'ch:snapshot': 'b' }, changes: ['ch:ingest:a\u2192b group'] },
  { name: 'a stopped member leaves its group; the others stay',
    nodes: [node('a'), node('b')], processes: [{ ...ch[0]!, order: 'stop' }, ...ch.slice(1)],
    current: { 'ch:egress': 'b', 'ch:ingest': 'b', 'ch:snapshot': 'b' },
    want: { 'ch:ingest': 'b', 'ch:snapshot': 'b' }, changes: ['ch:egress:b\u2192- removed'] },
  { name: 'rebalancing moves the smallest unit: an ungrouped process before a group',
    nodes: [node('a'), node('b')], processes: [...channel('g', 'in', 'out'), ...single('u')], current: { 'g:in': 'a', 'g:out': 'a', u: 'a' },
    want: { 'g:in': 'a', 'g:out': 'a', u: 'b' }, changes: ['u:a\u2192b rebalance'] },
  { name: 'rebalancing moves a group whole',
    nodes: [node('a'), node('b')], processes: [...channel('g1', 'in', 'out'), ...channel('g2', 'in', 'out')],
    current: { 'g1:in': 'a', 'g1:out': 'a', 'g2:in': 'a', 'g2:out': 'a' },
    want: { 'g1:in': 'a', 'g1:out': 'a', 'g2:in': 'b', 'g2:out': 'b' }, changes: ['g2:in:a\u2192b rebalance', 'g2:out:a\u2192b rebalance'] },
  { name: 'a group as large as the spread stays (moving it would only swap the nodes)',
    nodes: [node('a'), node('b')], processes: ch, current: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a' },
    want: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a' }, changes: [] },
  { name: 'when the busiest node holds only a channel too large to move, the next busiest gives a process',
    nodes: [node('a'), node('b'), node('c')], processes: [...ch, ...single('u1', 'u2')],
    current: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a', u1: 'b', u2: 'b' },
    want: { 'ch:egress': 'a', 'ch:ingest': 'a', 'ch:snapshot': 'a', u1: 'b', u2: 'c' }, changes: ['u2:b\u2192c rebalance'] },
];

t.test('group placement table', async (t) => {
  for (const c of cases) {
    const r = place(c.nodes, c.processes, c.current);
    t.same(r.assignments, c.want, c.name);
    if (c.changes) t.same(show(r), c.changes, `${c.name}: changes`);
    t.same(r.unplaced, c.unplaced ?? [], `${c.name}: unplaced`);
    t.same(place(c.nodes, c.processes, c.current), r, `${c.name}: same input, same output`);
  }
});

/** A fixed pseudo-random sequence (an LCG): the same cases on every run. */
function lcg(seed: number): () => number {
  let s = seed;
  return () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
}

t.test('random clusters: groups stay whole through placement, failover and rebalancing', async (t) => {
  const next = lcg(34);
  for (let round = 0; round < 40; round++) {
    const nodes = ['a', 'b', 'c', 'd'].map((id) => node(id, { maxProcesses: next() < 0.3 ? 4 + Math.floor(next() * 8) : 0, load: next() }));
    const processes = Array.from({ length: 10 + Math.floor(next() * 20) }, (_, i): PlacementProcess =>
      ({ id: `p${String(i).padStart(2, '0')}`, order: next() < 0.9 ? 'start' : 'stop', reference: next() < 0.3 ? '' : `r${Math.floor(next() * 6)}` }));
    let current: Assignments = {};
    for (let step = 0; step < 30; step++) {
      if (step === 10) nodes[Math.floor(next() * 4)]!.alive = false;
      const r = place(nodes, processes, current);
      const byRef = new Map<string, Set<string>>();
      for (const [id, n] of Object.entries(r.assignments)) {
        const ref = processes.find((p) => p.id === id)!.reference!;
        if (ref !== '') byRef.set(ref, new Set([...(byRef.get(ref) ?? []), n]));
      }
      const split = [...byRef].filter(([, ns]) => ns.size > 1).map(([ref]) => ref);
      if (split.length > 0) { t.fail(`round ${round} step ${step}: split ${split.join()}`); return; }
      const over = nodes.filter((n) => n.maxProcesses > 0 && Object.values(r.assignments).filter((x) => x === n.id).length > n.maxProcesses);
      if (over.length > 0) { t.fail(`round ${round} step ${step}: over capacity on ${over.map((n) => n.id).join()}`); return; }
      if (Object.values(r.assignments).some((n) => !nodes.find((x) => x.id === n)?.alive)) { t.fail(`round ${round}: a dead node assigned`); return; }
      current = r.assignments;
    }
    t.same(place(nodes, processes, current).changes, [], `round ${round}: settled within 30 steps`);
  }
});

t.test('the coordinator gives placement the reference and the domain of a shared process', async (t) => {
  const shared = { id: 'p', order: 'start' as const, metadata: null, updated_at: 0 };
  t.same(placementProcess({ ...shared, reference: 'top', config: { reference: 'cfg', domain: 'd' } }),
    { id: 'p', order: 'start', reference: 'top', domain: 'd' }, 'the value\'s reference, the config\'s domain');
  t.same(placementProcess({ ...shared, config: { reference: 'cfg' } }), { id: 'p', order: 'start', reference: 'cfg', domain: '' },
    'an older value without its own reference: the config\'s; no domain: \'\'');
  t.same(placementProcess({ ...shared, config: { reference: 7, domain: ['x'] } }), { id: 'p', order: 'start', reference: '', domain: '' },
    'values that are not strings: no group');
});
