import t, { type Test } from 'tap';
import type { FileDoorReport, FileDoorTapContext } from '../../../sdk/file-door.ts';
import { fsServeHooksRef } from '../../../sdk/fs-hooks.ts';
import { DoorTapModules } from '../../../core/door/tap-modules.ts';
import { tapContext, type WireReport } from '../../../core/door/tap-state.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * What the door gives the copies of a tap module (issue 45.4): a counter with reservations, a set
 * of recent ids and batched reports, main's side on the real DoorTapModules and a thread's copy on
 * the same shared state (the plugin lays out nothing).
 */

function setup(t: Test, counter: number, recent: number) {
  const modules = new DoorTapModules(fsServeHooksRef.create());
  t.teardown(() => modules.close());
  let main: FileDoorTapContext | undefined;
  const channel = modules.attach({ name: 'm', url: 'unused:', counter, recent }, (ctx) => { main = ctx; return {}; });
  const reports: FileDoorReport[] = [];
  channel.onReport((r) => reports.push(r));
  const [wire] = modules.wire();
  const outbox: WireReport[] = [];
  const thread = (everyMs?: number) => tapContext(structuredClone(wire!.init), wire!.state, {
    send: () => {}, onMessage: () => {}, report: (r) => outbox.push(r),
  }, false, everyMs);
  return { modules, channel, main: main!, reports, outbox, thread, deliver: () => { for (const r of outbox.splice(0)) modules.reportOf('m', r); } };
}

t.test('two copies share one counter: the last place goes to one; a place comes back after the report that carries it', async (t) => {
  const s = setup(t, 2, 0);
  const a = s.thread().ctx;
  const b = s.thread().ctx;
  t.ok(a.counter.reserve(), 'a takes the first place');
  t.ok(b.counter.reserve(), 'b the second');
  t.notOk(a.counter.reserve(), 'no third for a...');
  t.notOk(b.counter.reserve(), '...nor for b');
  t.ok(s.main.counter.full() && s.channel.counter.full(), 'every view is full');
  await waitFor(() => s.outbox.length === 2, { timeout: 5000, what: 'both reports' });
  s.channel.onReport(() => s.channel.counter.set(2));
  s.deliver();
  t.equal(s.channel.counter.taken(), 2, 'the places are the plugin\'s count now, the reservations given back');
  s.channel.counter.set(1);
  t.ok(b.counter.reserve(), 'a place freed by the plugin is taken again');
});

t.test('a reservation nobody reported expires after 8 s, and a late report does not take it back twice', async (t) => {
  const s = setup(t, 1, 0);
  const copy = s.thread(60_000);
  t.ok(copy.ctx.counter.reserve());
  s.modules.expire(Date.now() + 4000);
  t.equal(s.channel.counter.taken(), 1, 'kept while its report may be on its way');
  s.modules.expire(Date.now() + 10_000);
  t.equal(s.channel.counter.taken(), 0, 'cleared');
  copy.close();
  s.deliver();
  t.equal(s.channel.counter.taken(), 0, 'not below zero');
});

t.test('refusals: one copy hears the start of a run; blocked is the plugin\'s, seen at once', async (t) => {
  const s = setup(t, 0, 0);
  const a = s.thread().ctx;
  t.ok(a.counter.reserve(), 'no limit: always a place');
  t.ok(a.counter.refused(), 'the first refusal starts a run');
  t.notOk(s.main.counter.refused(), 'another copy\'s refusal continues it');
  s.main.counter.admitted();
  t.ok(a.counter.refused(), 'an admission anywhere ends it');
  s.channel.counter.block(true);
  t.ok(a.counter.blocked() && s.main.counter.blocked(), 'blocked everywhere at once');
  s.channel.counter.block(false);
  t.notOk(a.counter.blocked());
});

t.test('recent ids: added in one copy, found in every other; ids the ring cannot hold are not kept', async (t) => {
  const s = setup(t, 0, 4);
  const a = s.thread().ctx;
  a.recent.add('abc');
  t.ok(s.main.recent.has('abc') && s.channel.recent.has('abc'));
  t.notOk(s.main.recent.has('abcd'), 'another length is another id');
  a.recent.add('x'.repeat(25));
  a.recent.add('\u0100bc');
  t.notOk(s.main.recent.has('x'.repeat(25)), 'over 24 characters');
  t.notOk(s.main.recent.has('\u0100bc') || s.main.recent.has('\u0000bc'), 'not Latin-1');
  for (const id of ['1', '2', '3', '4']) a.recent.add(id);
  t.notOk(s.main.recent.has('abc'), 'the ring keeps the last 4');
  t.ok(s.main.recent.has('1'));
});

t.test('reports: main\'s copy at once; a thread\'s sums per key within its interval, items in order, `now` at once, the rest at close', async (t) => {
  const s = setup(t, 0, 0);
  s.main.add('k', 1);
  t.same(s.reports, [{ sums: [['k', 1]], items: [] }], 'main: synchronous');
  const copy = s.thread(30);
  copy.ctx.add('k', 2);
  copy.ctx.add('k', 3);
  copy.ctx.report('a');
  t.equal(s.outbox.length, 0, 'gathered');
  await waitFor(() => s.outbox.length === 1, { timeout: 5000, what: 'the batch' });
  t.same(s.outbox[0], { sums: [['k', 5]], items: ['a'], res: [] });
  copy.ctx.report('b', true);
  t.same(s.outbox[1], { sums: [], items: ['b'], res: [] }, 'now');
  copy.ctx.add('j', 7);
  copy.close();
  t.same(s.outbox[2], { sums: [['j', 7]], items: [], res: [] }, 'close sends the rest');
});
