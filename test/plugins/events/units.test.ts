import { createHmac } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import { EventBus, type Retained } from '../../../plugins/events/bus.ts';
import { checkFilterBounds, compileFilter, MAX_FILTER_GLOB_LENGTH, MAX_FILTER_GLOBS, splitGlobs } from '../../../plugins/events/filter.ts';
import { EventRing } from '../../../plugins/events/ring.ts';
import { signature, shownUrl } from '../../../plugins/events/webhook.ts';
import { validateEvents } from '../../../plugins/events/schema.ts';
import { Value } from '@sinclair/typebox/value';
import type { CoreEvent } from '../../../sdk/index.ts';
import { EventsConfig } from '../../../plugins/events/schema.ts';

const log = pino({ level: 'silent' });
const newBus = (capacity: number, boot = 'b1'): EventBus => new EventBus({ boot, ring: new EventRing(capacity), apps: 1 } satisfies Retained, log);
const tick = () => new Promise((r) => setImmediate(r));

t.test('ring: ids map to slots, the oldest fall out, a resize keeps the newest', async (t) => {
  const r = new EventRing(3);
  t.equal(r.newest, 0);
  t.equal(r.size, 0);
  for (let id = 1; id <= 5; id++) r.push({ id } as CoreEvent);
  t.equal(r.oldest, 3);
  t.equal(r.size, 3);
  t.equal(r.get(2), undefined);
  t.equal(r.get(4)!.id, 4);
  const bigger = new EventRing(10, r);
  t.same([bigger.oldest, bigger.newest, bigger.get(3)!.id], [3, 5, 3]);
  const smaller = new EventRing(2, r);
  t.same([smaller.oldest, smaller.newest, smaller.get(4)!.id], [4, 5, 4]);
});

t.test('filter: globs over types and subject values', async (t) => {
  const e = (type: string, subject: Record<string, string>) => ({ id: 1, boot: 'b', time: '', type, subject, payload: {} });
  const f = compileFilter({ types: ['process.*', 'ingest.publish.{start,stop}'], subjects: ['process:cam-*', '/live/*'] });
  t.ok(f(e('process.state', { process: 'cam-1' })));
  t.notOk(f(e('process.state', { process: 'mic-1' })));
  t.notOk(f(e('process.state', { reference: 'cam-1' })), 'a keyed glob looks at its key only');
  t.ok(f(e('ingest.publish.start', { stream: '/live/a.stream' })), 'a bare glob looks at any value; * crosses /');
  t.notOk(f(e('ingest.play.start', { stream: '/live/a.stream' })));
  t.ok(compileFilter({})(e('x', {})), 'empty matches all');
  t.throws(() => compileFilter({ types: ['[ab'] }), { status: 400, errorCode: 'EVENTS_BAD_FILTER' } as unknown as Error);
  // every event is tested against every glob of every stream: 60 globs of 1,000 stars froze the service
  t.throws(() => checkFilterBounds({ types: Array.from({ length: MAX_FILTER_GLOBS + 1 }, () => 'process.*') }), { status: 400, errorCode: 'EVENTS_BAD_FILTER' } as unknown as Error);
  t.throws(() => checkFilterBounds({ subjects: [`${'*'.repeat(MAX_FILTER_GLOB_LENGTH)}#`] }), { status: 400, errorCode: 'EVENTS_BAD_FILTER' } as unknown as Error);
  const atBounds = { types: Array.from({ length: MAX_FILTER_GLOBS }, (_, i) => `x${i}.*`), subjects: [`${'*'.repeat(MAX_FILTER_GLOB_LENGTH - 1)}1`] };
  checkFilterBounds(atBounds);
  t.ok(compileFilter(atBounds)(e('x3.y', { p: 'cam-1' })), 'at the bounds: taken');
  t.ok(compileFilter({ types: Array.from({ length: 40 }, () => 'x.*') }), 'a webhook\'s (the operator\'s) filter is not held to them');
  t.same(splitGlobs('a.*, {b,c}.x,,'), ['a.*', '{b,c}.x']);
  t.same(splitGlobs(undefined), []);
});

t.test('bus: emit is deferred, resume replays exactly, lost is announced', async (t) => {
  const bus = newBus(5);
  const live: number[] = [];
  bus.subscribe({}, undefined, (e) => live.push(e.id));
  bus.emit('a', {});
  t.same(live, [], 'never in the emitter stack');
  await tick();
  t.same(live, [1]);
  for (let i = 0; i < 4; i++) bus.emit('a', {});
  await tick();
  t.same(live, [1, 2, 3, 4, 5]);

  const got = (from: string | undefined) => {
    const out: CoreEvent[] = [];
    bus.subscribe({}, from, (e) => out.push(e)).close();
    return out;
  };
  t.same(got('b1-3').map((e) => e.id), [4, 5], 'after 3');
  t.same(got('3').map((e) => e.id), [4, 5], 'a bare number is of this run');
  t.same(got('b1-5'), [], 'nothing new');
  t.same(got(undefined), [], 'live only');
  t.same(got('b1-0').map((e) => e.id), [1, 2, 3, 4, 5], 'the whole history');
  bus.emit('a', {});
  bus.emit('a', {});
  const lost = got('b1-1');
  t.equal(lost[0]!.type, 'events.lost');
  t.same(lost[0]!.payload, { last_event_id: 'b1-1', oldest_id: 'b1-3' });
  t.equal(lost[0]!.id, 2, 'its id is the last one gone');
  t.same(lost.slice(1).map((e) => e.id), [3, 4, 5, 6, 7]);
  const other = got('zz-42');
  t.equal(other[0]!.type, 'events.lost', 'an id of another run');
  t.same(other.slice(1).map((e) => e.id), [3, 4, 5, 6, 7]);
  t.equal(got('garbage')[0]!.type, 'events.lost');

  const overrun: CoreEvent[] = [];
  bus.subscribe({}, undefined, (e) => overrun.push(e));
  for (let i = 0; i < 8; i++) bus.emit('a', {});
  await tick();
  t.equal(overrun[0]!.type, 'events.lost', 'more than the history in one tick');
  t.same(overrun.slice(1).map((e) => e.id), [11, 12, 13, 14, 15]);
  bus.close();
});

t.test('bus: emit never throws, a failing subscriber is contained; declare keeps the first', async (t) => {
  const bus = newBus(10);
  const ok: number[] = [];
  bus.subscribe({}, undefined, () => { throw new Error('boom'); });
  bus.subscribe({ types: ['b'] }, undefined, (e) => ok.push(e.id));
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  t.doesNotThrow(() => bus.emit('b', {}, cyclic));
  await tick();
  t.same(ok, [1]);
  bus.declare([{ type: 'v.x', description: 'one', subject: [], payload: {}, emitter: 'v' }]);
  bus.declare([{ type: 'v.x', description: 'two', subject: [], payload: {}, emitter: 'v' }]);
  t.equal(bus.types().find((s) => s.type === 'v.x')!.description, 'one');
  bus.close();
});

t.test('webhook signature and shown URL; config rules', async (t) => {
  t.equal(signature('key', 'body'), `sha256=${createHmac('sha256', 'key').update('body').digest('hex')}`);
  t.match(signature('key', 'body'), /^sha256=[0-9a-f]{64}$/);
  t.not(signature('key', 'body'), signature('other', 'body'));
  t.equal(shownUrl('https://u:p@example.com/x'), 'https://***@example.com/x');
  const def = Value.Default(EventsConfig, {}) as EventsConfig;
  t.same(validateEvents(def), {});
  t.match(validateEvents({ ...def, history: 0, heartbeat_ms: 5 }), { history: [/between/], heartbeat_ms: [/at least 100/] });
  t.match(validateEvents({ ...def, webhooks: [{ url: 'nope', types: [], subjects: ['process:{a'], secret: '' }] }), {
    'webhooks.0.url': [/http/], 'webhooks.0.subjects': [/malformed/],
  });
});
