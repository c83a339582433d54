import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { basicHeader, from, tally } from './client-helpers.ts';
import { open, untilClosed } from '../../core/http/raw-client.ts';

/*
 * memfs Basic guesses are slowed like logins (issue 27.3: 300 guesses took 0.23 s): a wrong
 * credential's answer and the address's next attempts wait longer after each failure, beyond
 * `fail_max_pending` waiting attempts the address gets 429 unchecked. Keyed by the client
 * address; the serving threads take the same decisions (a thread takes the right credential's
 * upload, and main's backoff still decides its answer).
 */

const USER = 'admin';
const PASS = 'pw-Secret-123';
const ATTACKER = '127.0.0.2';
const OTHER = '127.0.0.3';

/**
 * Delays long enough that a burst of parallel guesses all meet the first ones still waiting (on a
 * busy machine too), capped so the test ends soon; the per-address connection limit is off so
 * that the throttle alone answers every guess.
 */
function config(threads: number, delayMs: number): Record<string, unknown> {
  return {
    http: { threads, max_connections_per_address: 0 },
    plugins: [{ name: 'auth', config: { fail_delay_ms: delayMs, fail_delay_max_ms: delayMs, fail_max_pending: 3 } }, 'disk-fs', 'memfs'],
    storage: { memory: { auth: { enable: true, username: USER, password: PASS } } },
  };
}

const put = (url: string, who: string, i: number, pass: string | undefined) =>
  from(url, who, 'PUT', `/memfs/g/${i}.txt`, { headers: pass === undefined ? {} : basicHeader(USER, pass), body: 'data' });

t.test('300 parallel Basic guesses from one address: 3 are checked, the others get 429 unchecked', async (t) => {
  const app = await startApp(t, { config: config(0, 4_000) });
  const guesses = await Promise.all(Array.from({ length: 300 }, (_, i) => put(app.url, ATTACKER, i, `guess-${i}`)));
  t.same(tally(guesses), { 401: 3, 429: 297 }, 'only the queued ones were tried');
  const refused = guesses.find((g) => g.status === 429)!;
  t.same(JSON.parse(refused.body), { code: 429, message: 'Too Many Requests', details: ['Too many authorization attempts from this address; retry later'] });
  t.equal((await put(app.url, OTHER, 0, PASS)).status, 201, 'another address is not slowed');
  // the backoff passes: the right credential from the guessing address works again
  await waitFor(async () => (await put(app.url, ATTACKER, 1, PASS)).status === 201, { timeout: 30_000, what: 'the right credential after the backoff' });
});

t.test('requests without credentials (the first step of Basic) are not counted', async (t) => {
  const app = await startApp(t, { config: config(0, 5_000) });
  const bare = await Promise.all(Array.from({ length: 10 }, (_, i) => put(app.url, ATTACKER, i, undefined)));
  t.same(tally(bare), { 401: 10 }, 'each answered 401 at once, none queued');
  t.equal((await put(app.url, ATTACKER, 0, PASS)).status, 201, 'the right credential is not held back');
});

t.test('with serving threads: a thread does not answer the right credential while main backs off', async (t) => {
  const app = await startApp(t, { config: config(2, 3_000) });
  // six wrong guesses at once: three hold the address's queue (3 s each, one after the other),
  // the others are refused at once, which shows the queue is full from then on for a while
  const wrong = [0, 1, 2, 3, 4, 5].map((i) => put(app.url, ATTACKER, i, `guess-${i}`));
  await Promise.race(wrong.map(async (w) => { if ((await w).status === 429) return; await new Promise(() => {}); }));
  // the right credential on fresh connections: the kernel hands them to main and both threads
  const takenBefore = (await app.service.threads.stats()).reduce((n, s) => n + s.served, 0);
  const right = await Promise.all(Array.from({ length: 9 }, (_, i) => put(app.url, ATTACKER, 10 + i, PASS)));
  t.same(tally(right), { 429: 9 }, 'refused unchecked like any other attempt, on main and on the threads');
  const taken = (await app.service.threads.stats()).reduce((n, s) => n + s.served, 0) - takenBefore;
  t.ok(taken > 0, `threads took some of them (${taken}): their answer was main's backoff's`);
  t.equal((await put(app.url, OTHER, 0, PASS)).status, 201, 'another address uploads through any listener');
  t.same(tally(await Promise.all(wrong)), { 401: 3, 429: 3 });
  const listed = await app.request('GET', '/api/v3/fs/mem');
  t.same((listed.body as Array<{ name: string }>).map((f) => f.name), ['/g/0.txt'], 'nothing of the refused uploads stored');
});

t.test('a client waiting for 100 Continue behind a backoff is not cut by the body timeout', async (t) => {
  const app = await startApp(t, { config: { ...config(0, 2_500), http: { threads: 0, max_connections_per_address: 0, body_timeout_seconds: 1 } } });
  // a wrong credential's 401 is held 2.5 s, longer than the body timeout; the client sends its
  // body only after a 100, which never comes: the wait is the server's, not an idle client's
  const port = Number(new URL(app.url).port);
  const s = await open(port);
  const answer = untilClosed(s);
  s.write(`PUT /memfs/late.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n`
    + `Authorization: ${basicHeader(USER, 'wrong').authorization}\r\n\r\n`);
  const got = await answer;
  t.equal(got.status, 401, 'the backoff\'s 401, not a 408');
  t.match(JSON.parse(got.body), { code: 401, message: 'Unauthorized' });
});
