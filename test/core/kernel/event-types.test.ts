import t from 'tap';
import { definePlugin } from '../../../sdk/index.ts';
import { createTestApp } from '../../../testkit/index.ts';
import { eventCatalogue, mergeEventTypes } from '../../../core/kernel/event-types.ts';

const hot = { type: 'vendor.hot', description: 'The card is too hot.', subject: ['card'], payload: { celsius: 'temperature' } };

t.test('a type two emitters declare is listed once, first declaration, both names in order', async (t) => {
  const merged = mergeEventTypes([
    { emitter: 'a', events: [hot, { type: 'a.own', description: 'x', subject: [], payload: {} }] },
    { emitter: 'b', events: [{ ...hot, description: 'other words' }] },
    { emitter: 'c' },
  ]);
  t.same(merged.map((s) => [s.type, s.emitter, s.description]), [['vendor.hot', 'a, b', 'The card is too hot.'], ['a.own', 'a', 'x']]);
  t.ok(Object.isFrozen(merged[0]) && Object.isFrozen(merged[0]!.payload), 'frozen');
});

t.test('the core declares its own types first, each under its emitter', async (t) => {
  const types = eventCatalogue([]);
  t.same(types.slice(0, 1).map((s) => [s.type, s.emitter]), [['process.added', 'process']]);
  t.ok(types.some((s) => s.type === 'ingest.publish.start' && s.emitter === 'ingest'));
  t.ok(types.some((s) => s.type === 'config.changed' && s.emitter === 'core'));
});

t.test('a vendor plugin\'s `events` are listed at GET /api/v3/events/types after the built-ins\'', async (t) => {
  const vendor = definePlugin({ name: 'vendor-hot', events: [hot], setup() {} });
  const kit = await createTestApp({ t, plugins: [vendor, 'events', 'memfs', 'disk-fs'] });
  const res = await kit.request('GET', '/api/v3/events/types');
  t.equal(res.status, 200);
  const types = res.body as { type: string; emitter: string; subject: string[]; payload: Record<string, string> }[];
  const last = types.at(-1)!;
  t.same(last, { ...hot, emitter: 'vendor-hot' });
  t.equal(types.filter((s) => s.type === 'fs.full').length, 1);
  t.match(types.find((s) => s.type === 'fs.full')!.emitter, /^(disk-fs, memfs|memfs, disk-fs)$/, 'both filesystems named');
  t.ok(types.some((s) => s.type === 'cluster.leader'), 'a built-in that is not loaded is listed too');
});
