import t, { type Test } from 'tap';
import type { Socket } from 'node:net';
import { startApp, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { tlsFiles } from '../../helpers/certs.ts';
import { exchange, open, served, trickle, untilClosed, type RawOptions } from './raw-client.ts';

/*
 * The HTTP listener bounds (issue 27.3), each a key of `http.*`, on main's API port, main's
 * HTTPS listener and the serving threads' listeners: header size (431), header timeout (408),
 * body timeout (408; streamed bodies only when they stall) and connections per client address.
 * Clients are raw sockets from loopback addresses of their own (127.0.0.x).
 */

const BOUNDS = { max_header_size_kbytes: 8, header_timeout_seconds: 1, body_timeout_seconds: 1, max_connections_per_address: 4 };
const ATTACKER = '127.0.0.2';
const OTHER = '127.0.0.3';
const USER = 'admin';
const PASS = 'pw-Secret-123';

function config(threads: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { threads, ...BOUNDS },
    api: { auth: { enable: true, username: USER, password: PASS, jwt: { secret: 'jwt-secret-abc' } } },
    storage: { memory: { auth: { enable: false } } },
    ...extra,
  };
}

const portOf = (app: TestApp) => Number(new URL(app.url).port);
const errorBody = (body: string) => JSON.parse(body) as { code: number; message: string; details: string[] };

async function checkHeaderBounds(t: Test, port: number, o: RawOptions): Promise<void> {
  const big = await exchange(port, `GET /api HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(9 * 1024)}\r\n\r\n`, o);
  t.equal(big.status, 431, 'headers over max_header_size_kbytes: 431');
  t.same(errorBody(big.body), { code: 431, message: 'Request Header Fields Too Large',
    details: ['the request line and headers are larger than http.max_header_size_kbytes'] }, 'with the Error body');
  const small = await open(port, o);
  t.ok(await served(small), 'headers under the bound are served');
  small.destroy();
  // headers that never end: answered 408 and closed (the reference's default is 10 s, here 1 s)
  const slow = await exchange(port, 'GET /api HTTP/1.1\r\nHost: x\r\n', o);
  t.equal(slow.status, 408, 'unfinished headers: 408');
  t.same(errorBody(slow.body).details, ['the request headers did not arrive within http.header_timeout_seconds']);
}


/** `n` connections from one address, each asked for /ping: how many were served. */
async function servedOf(port: number, n: number, o: RawOptions, keep: Socket[]): Promise<number> {
  const socks = await Promise.all(Array.from({ length: n }, () => open(port, o).catch(() => undefined)));
  for (const s of socks) if (s) keep.push(s);
  const answers = await Promise.all(socks.map((s) => (s ? served(s) : Promise.resolve(false))));
  return answers.filter(Boolean).length;
}

async function checkPerAddress(t: Test, port: number, o: RawOptions = {}): Promise<void> {
  const keep: Socket[] = [];
  t.teardown(() => { for (const s of keep) s.destroy(); });
  t.equal(await servedOf(port, 12, { ...o, localAddress: ATTACKER }, keep), 4, '12 connections from one address: 4 served');
  t.equal(await servedOf(port, 2, { ...o, localAddress: OTHER }, keep), 2, 'another address is served meanwhile');
  for (const s of keep.splice(0)) s.destroy();
  // closed connections give their places back (counted down as the server sees them close)
  await waitFor(async () => {
    const socks: Socket[] = [];
    const n = await servedOf(port, 4, { ...o, localAddress: ATTACKER }, socks);
    for (const s of socks) s.destroy();
    return n === 4;
  }, { what: 'the places of closed connections back' });
}

for (const threads of [0, 2]) {
  const where = threads ? ' (serving threads)' : '';

  t.test(`header size and header timeout${where}`, async (t) => {
    const app = await startApp(t, { config: config(threads) });
    await checkHeaderBounds(t, portOf(app), { localAddress: ATTACKER });
  });

  t.test(`connections per address${where}: the limit holds over main and every thread together`, async (t) => {
    const app = await startApp(t, { config: config(threads) });
    await checkPerAddress(t, portOf(app));
  });

  t.test(`100 trickled bodies to the public POST /api/login are closed with 408${where}`, async (t) => {
    // one address would hold 4 connections at most: the trickling clients come from 100 addresses
    const app = await startApp(t, { config: config(threads) });
    const port = portOf(app);
    const socks = await Promise.all(Array.from({ length: 100 }, (_, i) => open(port, { localAddress: `127.0.1.${i + 1}` })));
    t.teardown(() => { for (const s of socks) s.destroy(); });
    const outcomes = socks.map((s) => untilClosed(s));
    for (const s of socks) {
      s.write(`POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"username":`);
      // a byte every 200 ms: never idle, never done
      trickle(s, 200);
    }
    const login = await fetch(`${app.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: USER, password: PASS }) });
    t.equal(login.status, 200, 'a legitimate login is served meanwhile');
    // generous: the bound is 1 s, checked every second; without it they stay open for good
    await waitFor(() => socks.every((s) => s.destroyed), { timeout: 20_000, what: 'every trickling connection closed' });
    const got = await Promise.all(outcomes);
    t.equal(got.filter((o) => o.status === 408).length, 100, 'each answered 408');
    t.match(errorBody(got[0]!.body), { code: 408, message: 'Request Timeout' });
  });
}

t.test('a streamed upload may take longer than the body timeout while bytes arrive, not when it stalls', async (t) => {
  const app = await startApp(t, { config: config(0) });
  const port = portOf(app);
  const head = (length: number) => `PUT /memfs/slow.txt HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\n\r\n`;
  const slow = await open(port);
  t.teardown(() => slow.destroy());
  const answer = untilClosed(slow);
  slow.write(head(12));
  for (let i = 0; i < 12; i++) {
    await new Promise((r) => setTimeout(r, 250));
    slow.write('x');
  }
  // 3 s for a body, three times the timeout: stored, since no second passed without a byte
  const stored = await waitFor(async () => {
    const r = await fetch(`${app.url}/memfs/slow.txt`);
    return r.status === 200 ? r.text() : undefined;
  }, { what: 'the slow upload stored' });
  t.equal(stored, 'x'.repeat(12));
  slow.end();
  await answer;
  const stalled = await exchange(port, `${head(100)}only a part`);
  t.equal(stalled.status, 408, 'a stalled upload is closed with 408');
  t.match(errorBody(stalled.body).details[0], /no byte of the request body arrived/);
});

t.test('the trusted proxies are not counted per address', async (t) => {
  const app = await startApp(t, { config: config(0, { api: { access: { trusted_proxies: [`${ATTACKER}/32`] } } }) });
  const keep: Socket[] = [];
  t.teardown(() => { for (const s of keep) s.destroy(); });
  t.equal(await servedOf(portOf(app), 12, { localAddress: ATTACKER }, keep), 12, 'a proxy carries many clients');
});

t.test('main\'s HTTPS listener: the same header and connection bounds', async (t) => {
  const files = tlsFiles(t);
  const app = await startApp(t, { config: config(0, { tls: { enable: true, address: '127.0.0.1:0', cert_file: files.certFile, key_file: files.keyFile } }) });
  const port = app.service.httpsPort;
  await checkHeaderBounds(t, port, { localAddress: ATTACKER, tls: { ca: files.ca } });
  await checkPerAddress(t, port, { tls: { ca: files.ca } });
  // a TLS handshake that never starts: closed after the header timeout (node's default is 120 s)
  const silent = await open(port, { localAddress: OTHER });
  silent.resume();
  t.teardown(() => silent.destroy());
  await waitFor(() => silent.destroyed || silent.readableEnded, { timeout: 15_000, what: 'the silent TLS connection closed' });
  t.pass('a silent TLS connection is closed');
});

t.test('a streamed body cut by the body timeout ends the route\'s read at once (it fails, as when the client goes)', async (t) => {
  const fixture = new URL('../fixtures/stream-body-plugin.ts', import.meta.url).pathname;
  const app = await startApp(t, { config: { ...config(0), plugins: ['*', fixture] } });
  const stalled = await exchange(portOf(app), 'PUT /test/stream HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly a part');
  t.equal(stalled.status, 408, 'the stalled body is answered 408');
  const ends = await waitFor(async () => {
    const r = (await app.request('GET', '/test/stream')).body as { ends: string[] };
    return r.ends.length > 0 ? r.ends : undefined;
  }, { timeout: 5000, what: 'the route\'s read to end' });
  t.match(ends, [/^failed 11: /], 'the route saw its body fail after the 11 bytes that came');
});
