import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { clientKey, DemandBudget } from '../../../../core/process/demand/budget.ts';

/*
 * The on-demand budget's keys and rules (issue 43, point 5): the config keys under
 * `encoder.ondemand` validated at `PUT /api/v3/config`, a client's key (IPv6 by its /64), the
 * sliding window of a client's starts, the total, and readers inside the service.
 */

t.test('the keys are validated at PUT /api/v3/config and stored', async (t) => {
  const app = await startApp(t);
  const cfg = (await app.request('GET', '/api/v3/config')).body.config.encoder.ondemand;
  t.same(cfg, { idle_seconds: 30, max_starts_per_client: 10, client_window_seconds: 60, max_running: 32 }, 'the defaults');
  for (const bad of [{ max_starts_per_client: -1 }, { client_window_seconds: 0 }, { max_running: -1 }, { max_running: 'many' }, { client_window_seconds: 86_401 }]) {
    const r = await app.request('PUT', '/api/v3/config', { body: { encoder: { ondemand: bad } } });
    t.equal(r.status, 400, `refused: ${JSON.stringify(bad)}`);
    t.match(JSON.stringify(r.body), /ondemand/, 'the answer names the key');
  }
  const ok = await app.request('PUT', '/api/v3/config', { body: { encoder: { ondemand: { max_starts_per_client: 3, client_window_seconds: 120, max_running: 0 } } } });
  t.equal(ok.status, 200, ok.text);
  const stored = (await app.request('GET', '/api/v3/config')).body.config.encoder.ondemand;
  t.match(stored, { max_starts_per_client: 3, client_window_seconds: 120, max_running: 0 });
});

t.test('a client is its IPv4 address or its IPv6 /64', async (t) => {
  t.equal(clientKey('192.0.2.7'), '192.0.2.7');
  t.equal(clientKey('192.0.2.7:5000'), '192.0.2.7', 'a port goes');
  t.equal(clientKey('::ffff:192.0.2.7'), '192.0.2.7', 'IPv4-mapped');
  t.equal(clientKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  t.equal(clientKey('[2001:db8:1:2:bbbb::9]:443'), '2001:db8:1:2::/64', 'the same /64, another host and a port');
  t.equal(clientKey('2001:db8::1'), '2001:db8:0:0::/64', 'zeros filled in');
  t.equal(clientKey('::1'), '0:0:0:0::/64');
  t.not(clientKey('2001:db8:1:3::1'), clientKey('2001:db8:1:2::1'), 'another /64');
});

t.test('starts count for the window; the total at once; readers inside the service', async (t) => {
  let now = 1_000_000;
  const b = new DemandBudget({ maxStartsPerClient: 2, windowSeconds: 10, maxRunning: 3, fullRetrySeconds: 7 }, () => now);
  t.equal(b.check('10.0.0.1', 0), undefined);
  b.charge('10.0.0.1');
  now += 4000;
  b.charge('10.0.0.1');
  t.same(b.check('10.0.0.1', 2), { why: 'client', retryAfter: 6 }, 'at its budget until the first start leaves the window');
  t.equal(b.check('10.0.0.2', 2), undefined, 'another client may');
  t.same(b.message(['p'], 2).blocked, [['10.0.0.1', 1_010_000]], 'the door taps learn until when');
  t.same(b.check('10.0.0.2', 3), { why: 'total', retryAfter: 7 }, 'the total holds for everyone');
  t.same(b.check(undefined, 3), { why: 'total', retryAfter: 7 }, 'a reader inside the service too');
  t.equal(b.check(undefined, 2), undefined, 'which no client budget bounds');
  b.charge(undefined);
  now += 6000;
  t.equal(b.check('10.0.0.1', 0), undefined, 'the first start left the window');
  t.same(b.message([], 0), { t: 'budget', waiting: [], full: 0, blocked: [] });
  const open = new DemandBudget({ maxStartsPerClient: 0, windowSeconds: 10, maxRunning: 0, fullRetrySeconds: 1 }, () => now);
  for (let i = 0; i < 50; i++) open.charge('10.0.0.1');
  t.equal(open.check('10.0.0.1', 1000), undefined, '0 = no limit');
});
