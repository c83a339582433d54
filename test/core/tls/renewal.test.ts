import t from 'tap';
import { coversNames, renewAt, retryDelay } from '../../../core/tls/renewal.ts';

t.test('renewal is due when a third of the lifetime is left', async (t) => {
  const from = new Date('2026-01-01T00:00:00Z');
  const to = new Date('2026-04-01T00:00:00Z'); // 90 days
  t.equal(new Date(renewAt(from, to)).toISOString(), '2026-03-02T00:00:00.000Z', '30 days ahead');
  t.equal(renewAt(to, from), from.getTime(), 'a broken validity is due at once');
});

t.test('failed orders are retried with a growing delay, at most an hour', async (t) => {
  t.same([1, 2, 3].map(retryDelay), [10_000, 20_000, 40_000]);
  t.equal(retryDelay(30), 3600_000);
});

t.test('a certificate is reused only while it covers every host.name', async (t) => {
  t.ok(coversNames(['Example.com', 'www.example.com'], ['example.com']));
  t.notOk(coversNames(['example.com'], ['example.com', 'live.example.com']));
});
