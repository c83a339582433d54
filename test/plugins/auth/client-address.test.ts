import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { basicHeader, from, tally } from './client-helpers.ts';

/*
 * The throttles are keyed by the real client address (issue 27.3): X-Real-IP and X-Forwarded-For
 * name the client only when the TCP peer is a configured trusted proxy, and none is by default.
 * Before, loopback was trusted by default and a local client rotating X-Real-IP started afresh
 * with every guess. The serving threads forward the TCP peer signed, and main judges it the same.
 */

const USER = 'admin';
const PASS = 'pw-Secret-123';
const CLIENT = '127.0.0.2';

function config(threads: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { threads, max_connections_per_address: 0 },
    api: { auth: { enable: true, username: USER, password: PASS, jwt: { secret: 'jwt-secret-abc' } } },
    // long enough that the parallel guesses all meet the first ones waiting
    plugins: [{ name: 'auth', config: { fail_delay_ms: 3_000, fail_delay_max_ms: 3_000, fail_max_pending: 3 } }, 'disk-fs', 'memfs'],
    storage: { memory: { auth: { enable: true, username: USER, password: PASS } } },
    ...extra,
  };
}

const rotating = (i: number) => ({ 'x-real-ip': `203.0.113.${i + 1}`, 'x-forwarded-for': `198.51.100.${i + 1}` });

const login = (url: string, i: number) => from(url, CLIENT, 'POST', '/api/login', {
  headers: { 'content-type': 'application/json', ...rotating(i) }, body: JSON.stringify({ username: USER, password: `guess-${i}` }),
});

const basicGuess = (url: string, i: number) => from(url, CLIENT, 'PUT', `/memfs/x/${i}.txt`, {
  headers: { ...basicHeader(USER, `guess-${i}`), ...rotating(i) }, body: 'data',
});

for (const threads of [0, 2]) {
  const where = threads ? ' (serving threads)' : '';

  t.test(`a client rotating X-Real-IP stays one address for the login backoff${where}`, async (t) => {
    const app = await startApp(t, { config: config(threads) });
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => login(app.url, i)));
    t.same(tally(guesses), { 401: 3, 429: 17 }, 'one queue for all of them: 3 tried, the rest refused');
  });

  t.test(`and for the Basic backoff${where}`, async (t) => {
    const app = await startApp(t, { config: config(threads) });
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => basicGuess(app.url, i)));
    t.same(tally(guesses), { 401: 3, 429: 17 }, 'one queue for all of them');
  });
}

t.test('behind a configured proxy the forwarded address counts: clients are throttled apart', async (t) => {
  const app = await startApp(t, { config: config(0, { api: { access: { trusted_proxies: [`${CLIENT}/32`] }, auth: { enable: true, username: USER, password: PASS, jwt: { secret: 'jwt-secret-abc' } } } }) });
  const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => login(app.url, i)));
  t.same(tally(guesses), { 401: 20 }, 'twenty clients, one guess each');
});

t.test('a loopback peer speaking for another client is never the local exemption (disable_localhost)', async (t) => {
  const app = await startApp(t, { config: { api: { auth: { enable: true, disable_localhost: true, username: USER, password: PASS } } } });
  t.equal((await app.request('GET', '/api/v3/process')).status, 200, 'a local client: exempt');
  // a reverse proxy on this host that is not in trusted_proxies: its header is ignored, and its
  // clients do not become local ones
  const proxied = await app.request('GET', '/api/v3/process', { headers: { 'x-real-ip': '203.0.113.9' } });
  t.equal(proxied.status, 401, 'X-Real-IP from an untrusted loopback peer: a token is needed');
  const fwd = await app.request('GET', '/api/v3/process', { headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(fwd.status, 401, 'X-Forwarded-For the same');
});
