import t from 'tap';
import type { Requester } from '../../helpers/app.ts';
import { PASS, USER, startAuthApp } from './helpers.ts';
import { LoginThrottle } from '../../../plugins/auth/throttle.ts';

// large enough that ordering checks hold on a busy 2-core machine
const BASE = 500;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function timed(app: Requester, ip: string, password: string) {
  const start = Date.now();
  const res = await app.request('POST', '/api/login', { body: { username: USER, password }, headers: from(ip) });
  return { status: res.status, ms: Date.now() - start, end: Date.now() };
}

t.test('failed logins are slowed per address with a growing delay; other clients are not', async (t) => {
  const app = await startAuthApp(t, { authPlugin: { fail_delay_ms: BASE, fail_delay_max_ms: 10_000 } });
  const a1 = await timed(app, '10.0.0.1', 'wrong');
  t.equal(a1.status, 401);
  t.ok(a1.ms >= BASE, `first failure delayed (${a1.ms} ms)`);
  const a2 = await timed(app, '10.0.0.1', 'wrong');
  t.ok(a2.ms >= 2 * BASE, `second failure delayed twice as long (${a2.ms} ms)`);

  // while the third failure of A is held back, B logs in and C fails for the first time
  const [a3, b, c] = await Promise.all([
    timed(app, '10.0.0.1', 'wrong'),
    timed(app, '10.0.0.2', PASS),
    timed(app, '10.0.0.3', 'wrong'),
  ]);
  t.ok(a3.ms >= 4 * BASE, `third failure of A delayed again (${a3.ms} ms)`);
  t.equal(b.status, 200, 'a good login from another address works');
  t.ok(b.end < a3.end, `B (${b.ms} ms) is not held behind A (${a3.ms} ms)`);
  t.ok(c.ms >= BASE && c.end < a3.end, `C only pays its own first delay (${c.ms} ms)`);

  const ok = await timed(app, '10.0.0.1', PASS);
  t.equal(ok.status, 200, 'A can still log in with the right password');
  t.ok(ok.ms < 4 * BASE, `a success is not delayed (${ok.ms} ms)`);
  const again = await timed(app, '10.0.0.1', 'wrong');
  t.ok(again.ms >= BASE && again.ms < 4 * BASE, `a success resets the count (${again.ms} ms)`);
});

t.test('parallel guesses from one address are serialised, and the queue is bounded', async (t) => {
  const app = await startAuthApp(t, { authPlugin: { fail_delay_ms: BASE, fail_delay_max_ms: 10_000, fail_max_pending: 3 } });
  const start = Date.now();
  const results = await Promise.all([1, 2, 3, 4, 5].map(() => timed(app, '10.0.0.9', 'guess')));
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [401, 401, 401, 429, 429], 'three queued, the rest refused at once');
  const refused = results.filter((r) => r.status === 429);
  t.ok(refused.every((r) => r.ms < BASE), 'the overflow is answered without waiting');
  t.ok(Date.now() - start >= 7 * BASE, `three guesses took 1+2+4 delays (${Date.now() - start} ms)`);
  const body = (await app.request('POST', '/api/login', { body: {}, headers: from('10.0.0.10') })).body;
  t.same(body.details, ['Missing authorization credentials'], 'an unrecognised request is a failure too');
});

t.test('the throttle state stays bounded and is cleaned on close', async (t) => {
  const th = new LoginThrottle({ baseMs: 0, maxMs: 0, forgetMs: 60_000, maxEntries: 3, maxPending: 2 });
  t.teardown(() => th.close());
  const fail = async () => ({ ok: false as const, error: new Error('no') });
  const succeed = async () => ({ ok: true as const, value: 1 });
  for (const ip of ['a', 'b', 'c', 'd', 'e']) await th.run(ip, fail, () => new Error('busy'));
  t.equal(th.size, 3, 'at most maxEntries addresses');
  t.equal(th.failures('a'), 0, 'the least recently seen went first');
  t.equal(th.failures('e'), 1);
  await th.run('e', succeed, () => new Error('busy'));
  t.equal(th.failures('e'), 0, 'a success forgets the address');
  t.equal(th.size, 2);
  th.prune(Date.now() + 60_000);
  t.equal(th.size, 0, 'failures are forgotten after forgetMs');
  t.equal(th.delay(1), 0);
  const th2 = new LoginThrottle({ baseMs: 100, maxMs: 1000, forgetMs: 60_000, maxEntries: 10, maxPending: 2 });
  t.same([1, 2, 3, 4, 5, 9].map((n) => th2.delay(n)), [100, 200, 400, 800, 1000, 1000], 'doubling, capped');
  th2.close();
  const th3 = new LoginThrottle({ baseMs: 30_000, maxMs: 30_000, forgetMs: 60_000, maxEntries: 10, maxPending: 2 });
  const waiting = th3.run('x', fail, () => new Error('busy'));
  await new Promise((r) => setImmediate(r));
  const start = Date.now();
  th3.close();
  await waiting;
  t.ok(Date.now() - start < 10_000, 'close releases a failure that would wait 30 s');
});

t.test('IPv6 clients are slowed per /64: rotating through it gains nothing (issue 11.8)', async (t) => {
  // one failure holds its /64's queue for BASE*6; a second address of the same /64 finds the queue full
  const app = await startAuthApp(t, { authPlugin: { fail_delay_ms: BASE * 6, fail_delay_max_ms: 10_000, fail_max_pending: 1 } });
  const [a, b, other] = await Promise.all([
    timed(app, '2001:db8:1:2::1', 'wrong'),
    timed(app, '2001:db8:1:2::2', 'wrong'),
    timed(app, '2001:db8:1:3::1', PASS),
  ]);
  t.same([a.status, b.status].sort(), [401, 429], 'two addresses of one /64 share one queue');
  t.equal(other.status, 200, 'another /64 is another client');
});
