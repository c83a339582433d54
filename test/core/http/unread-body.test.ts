import t from 'tap';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startCli, type CliApp } from '../../helpers/cli.ts';

/**
 * Refusals sent before the upload's body is read reach the client with their status and Error
 * body, never as a reset. The service runs as its own process, so its answers and the clients
 * compete for the CPU as in production (the reset showed on a busy machine).
 */

const MiB = 1024 * 1024;
const USER = 'admin';
const PASS = 'pw-Secret-123';
const ROUNDS = 50;
const body = Buffer.alloc(5 * MiB, 7);

async function startService(t: Tap, threads = 0): Promise<{ app: CliApp; token: string }> {
  const app = await startCli(t, {
    http: { threads },
    api: { max_body_size_mbytes: 4, auth: { enable: true, username: USER, password: PASS, jwt: { secret: 'jwt-secret-abc' } } },
    plugins: [{ name: 'auth', config: { fail_delay_ms: 0, fail_delay_max_ms: 0 } }, 'disk-fs', 'memfs'],
    storage: { disk: { max_size_mbytes: 4 }, memory: { max_size_mbytes: 4, auth: { enable: true, username: USER, password: PASS } } },
  });
  const res = await fetch(`${app.url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: USER, password: PASS }) });
  const { access_token: token } = await res.json() as { access_token: string };
  return { app, token };
}
type Tap = { teardown(fn: () => unknown): void };

const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

/** Each case: a refused 5 MiB upload and the answer it must get. */
function cases(token: string) {
  const bearer = { authorization: `Bearer ${token}` };
  return [
    { name: 'mem API full', path: '/api/v3/fs/mem/x.ts', headers: bearer, status: 507 },
    { name: 'disk API full', path: '/api/v3/fs/disk/x.ts', headers: bearer, status: 507 },
    { name: 'public memfs, wrong credentials', path: '/memfs/x.ts', headers: { authorization: basic(USER, 'wrong') }, status: 401 },
    { name: 'API without a token (authorize hook)', path: '/api/v3/fs/mem/x.ts', headers: {}, status: 401 },
    { name: 'JSON over the body limit', path: '/api/v3/metadata/k', headers: { ...bearer, 'content-type': 'application/json' }, status: 413 },
  ];
}

/** Each case ROUNDS times through fetch: every answer its status with the Error body. */
async function refusedThroughFetch(t: Tap & { same(a: unknown, b: unknown, m: string): void }, app: CliApp, token: string): Promise<void> {
  for (const c of cases(token)) {
    const outcomes: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i++) {
      let key: string;
      try {
        const res = await fetch(app.url + c.path, { method: 'PUT', headers: c.headers, body });
        const json = await res.json() as { code?: number; message?: string };
        key = `${res.status}${json.code === res.status && json.message ? '' : ' without Error body'}`;
      } catch (err) {
        key = `failed: ${(err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`;
      }
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    t.same(outcomes, { [c.status]: ROUNDS }, c.name);
  }
}

t.test(`${ROUNDS} refused 5 MiB uploads in a row through fetch each get their status and Error body`, async (t) => {
  const { app, token } = await startService(t);
  await refusedThroughFetch(t, app, token);
  const files = await (await fetch(`${app.url}/api/v3/fs/mem`, { headers: { authorization: `Bearer ${token}` } })).json();
  t.same(files, [], 'nothing was stored');
});

function curl(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', ...args], { maxBuffer: 1024 * 1024 }, (error, out, err) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, out, err });
    });
  });
}

t.test(`${ROUNDS} refused 5 MiB uploads through curl, with and without Expect: 100-continue`, async (t) => {
  const { app, token } = await startService(t);
  const file = join(app.dir, 'upload.bin');
  await writeFile(file, body);
  for (const c of cases(token)) {
    for (const expect of [false, true]) {
      const outcomes: Record<string, number> = {};
      for (let i = 0; i < ROUNDS; i++) {
        const headers = Object.entries(c.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
        // curl sends `Expect: 100-continue` itself for a body this large; `Expect:` turns it off
        const r = await curl([...headers, ...(expect ? [] : ['-H', 'Expect:']), '-T', file, app.url + c.path]);
        const lines = r.out.split('\n');
        const status = lines.pop();
        let ok = false;
        try { ok = JSON.parse(lines.join('\n')).code === c.status; } catch { /* no Error body */ }
        const key = r.code === 0 ? `${status}${ok ? '' : ' without Error body'}` : `curl exit ${r.code}: ${r.err.trim()}`;
        outcomes[key] = (outcomes[key] ?? 0) + 1;
      }
      t.same(outcomes, { [c.status]: ROUNDS }, `${c.name}${expect ? ' (Expect)' : ''}`);
    }
  }
});

t.test('the same through serving threads: main\'s early answer reaches the client through the thread', async (t) => {
  // the thread passes the upload on to main, which refuses before the body ended; the thread
  // must then drop the rest itself, as main does, or the client sees a reset
  const { app, token } = await startService(t, 2);
  await refusedThroughFetch(t, app, token);
});
