import t from 'tap';
import { place, type Assignments, type PlacementNode, type PlacementProcess } from '../../../plugins/cluster/placement.ts';

const node = (id: string, extra: Partial<PlacementNode> = {}): PlacementNode => ({ id, alive: true, maxProcesses: 0, load: 0, ...extra });
const run = (...ids: string[]): PlacementProcess[] => ids.map((id) => ({ id, order: 'start' }));
const counts = (a: Assignments): Record<string, number> => {
  const c: Record<string, number> = {};
  for (const n of Object.values(a)) c[n] = (c[n] ?? 0) + 1;
  return c;
};

interface Case {
  name: string;
  nodes: PlacementNode[];
  processes: PlacementProcess[];
  current: Assignments;
  threshold?: number;
  want: Record<string, string>;
  changes?: string[];
  unplaced?: string[];
}

const cases: Case[] = [
  { name: 'new processes spread over the least busy nodes, ties by load then id',
    nodes: [node('b', { load: 0.5 }), node('a', { load: 0.9 }), node('c', { load: 0.1 })],
    processes: run('p1', 'p2', 'p3', 'p4'), current: {},
    want: { p1: 'c', p2: 'b', p3: 'a', p4: 'c' }, changes: ['p1:-\u2192c new', 'p2:-\u2192b new', 'p3:-\u2192a new', 'p4:-\u2192c new'] },
  { name: 'balanced: nothing moves',
    nodes: [node('a'), node('b')], processes: run('p1', 'p2', 'p3'), current: { p1: 'a', p2: 'b', p3: 'a' },
    want: { p1: 'a', p2: 'b', p3: 'a' }, changes: [] },
  { name: 'a dead node\'s processes go to live ones (fewest first)',
    nodes: [node('a'), node('b', { alive: false }), node('c')], processes: run('p1', 'p2', 'p3', 'p4'),
    current: { p1: 'a', p2: 'b', p3: 'b', p4: 'c' },
    want: { p1: 'a', p2: 'a', p3: 'c', p4: 'c' }, changes: ['p2:b\u2192a failover', 'p3:b\u2192c failover'] },
  { name: 'a vanished node counts as dead',
    nodes: [node('a')], processes: run('p1'), current: { p1: 'gone' }, want: { p1: 'a' }, changes: ['p1:gone\u2192a failover'] },
  { name: 'capacity is a hard limit; what fits nowhere is unplaced',
    nodes: [node('a', { maxProcesses: 1 }), node('b', { maxProcesses: 1 })], processes: run('p1', 'p2', 'p3'), current: {},
    want: { p1: 'a', p2: 'b' }, unplaced: ['p3'] },
  { name: 'a lowered capacity sheds the highest ids',
    nodes: [node('a', { maxProcesses: 1 }), node('b')], processes: run('p1', 'p2'), current: { p1: 'a', p2: 'a' },
    want: { p1: 'a', p2: 'b' }, changes: ['p2:a\u2192b failover'] },
  { name: 'stopped and deleted processes are unassigned',
    nodes: [node('a')], processes: [{ id: 'p1', order: 'stop' }, { id: 'p2', order: 'start' }], current: { p1: 'a', p2: 'a', p3: 'a' },
    want: { p2: 'a' }, changes: ['p1:a\u2192- removed', 'p3:a\u2192- removed'] },
  { name: 'spread over the threshold: exactly one rebalancing move per call',
    nodes: [node('a'), node('b')], processes: run('p1', 'p2', 'p3', 'p4', 'p5'), current: { p1: 'a', p2: 'a', p3: 'a', p4: 'a', p5: 'a' },
    want: { p1: 'a', p2: 'a', p3: 'a', p4: 'a', p5: 'b' }, changes: ['p5:a\u2192b rebalance'] },
  { name: 'spread within a larger threshold: no move',
    nodes: [node('a'), node('b')], processes: run('p1', 'p2', 'p3'), current: { p1: 'a', p2: 'a', p3: 'a' }, threshold: 3,
    want: { p1: 'a', p2: 'a', p3: 'a' }, changes: [] },
  { name: 'a threshold below 1 acts as 1 (a difference of one never ping-pongs)',
    nodes: [node('a'), node('b')], processes: run('p1', 'p2', 'p3'), current: { p1: 'a', p2: 'a', p3: 'b' }, threshold: 0,
    want: { p1: 'a', p2: 'a', p3: 'b' }, changes: [] },
  { name: 'no live node: everything unplaced',
    nodes: [node('a', { alive: false })], processes: run('p1'), current: { p1: 'a' },
    want: {}, unplaced: ['p1'], changes: ['p1:a\u2192- failover'] },
];

t.test('placement table', async (t) => {
  for (const c of cases) {
    const r = place(c.nodes, c.processes, c.current, { threshold: c.threshold });
    t.same(r.assignments, c.want, c.name);
    if (c.changes) t.same(r.changes.map((x) => `${x.process}:${x.from ?? '-'}\u2192${x.to ?? '-'} ${x.reason}`), c.changes, `${c.name}: changes`);
    t.same(r.unplaced, c.unplaced ?? [], `${c.name}: unplaced`);
    t.same(place(c.nodes, c.processes, c.current, { threshold: c.threshold }), r, `${c.name}: same input, same output`);
  }
});

t.test('repeated calls converge one move at a time and then stay put', async (t) => {
  const nodes = [node('a'), node('b'), node('c')];
  const processes = run(...Array.from({ length: 12 }, (_, i) => `p${String(i).padStart(2, '0')}`));
  let current: Assignments = Object.fromEntries(processes.map((p) => [p.id, 'a']));
  let calls = 0;
  for (;;) {
    const r = place(nodes, processes, current);
    t.ok(r.changes.filter((c) => c.reason === 'rebalance').length <= 1, 'at most one move per call');
    if (r.changes.length === 0) break;
    current = r.assignments;
    if (++calls > 20) { t.fail('did not converge'); break; }
  }
  t.same(counts(current), { a: 4, b: 4, c: 4 }, 'balanced');
  t.equal(calls, 8, 'eight single moves from 12/0/0 to 4/4/4');
  t.same(place(nodes, processes, current).changes, [], 'stable once balanced');
});

t.test('input order does not matter', async (t) => {
  const nodes = [node('a'), node('b', { load: 1 }), node('c')];
  const processes = run('x', 'y', 'z', 'w');
  const r1 = place(nodes, processes, { x: 'b' });
  const r2 = place([...nodes].reverse(), [...processes].reverse(), { x: 'b' });
  t.same(r1, r2);
});
