import type { Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { startApp, type TestApp, type TestLike } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';

/** One request on a fresh connection (so the kernel picks a listener each time); the path goes out as written. */
export function fresh(url: string, opts: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {}): Promise<{ status: number; body: Buffer; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    // the path is sent as written (a URL object would resolve `..` and `%2e%2e` before sending)
    const m = /^http:\/\/(\[[^\]]+\]|[^/:]+):(\d+)(.*)$/.exec(url)!;
    const req = request({ host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]), path: m[3] || '/', method: opts.method ?? 'GET', agent: false, headers: { connection: 'close', ...opts.headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Test config: threads on, memfs writes open, sessions off (so threads answer memfs reads themselves). */
export function threadsConfig(threads: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    http: { threads },
    sessions: { enable: false },
    storage: { memory: { auth: { enable: false } } },
    ...extra,
  };
}

export type Answer = { status: number; body: Buffer; headers: IncomingHttpHeaders };
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
export const comparable = (a: Answer) => JSON.stringify({
  status: a.status, body: a.body.toString(),
  headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => !VOLATILE.has(k)).sort(([x], [y]) => x.localeCompare(y))),
});

/** Sends `make(n)` over fresh connections until both threads `key` a request; returns the answers unlike `want`. */
export async function spread(app: TestApp, key: 'served' | 'forwarded' | 'handled', send: (n: number) => Promise<Answer>, want: Answer): Promise<string[]> {
  const wrong: string[] = [];
  const before = await app.service.threads.stats();
  let n = 0;
  await waitFor(async () => {
    for (let i = 0; i < 6; i++) {
      const got = await send(n++);
      if (comparable(got) !== comparable(want)) wrong.push(comparable(got));
    }
    const now = await app.service.threads.stats();
    return now.every((s, i) => count(s, key) > count(before[i]!, key));
  }, { timeout: 30_000, what: `both threads ${key}` });
  return wrong;
}

export const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
export const memNames = async (app: TestApp) => ((await app.request('GET', '/api/v3/fs/mem')).body as { name: string }[]).map((f) => f.name);

/**
 * Uploads through the threads (writes open, a 1 MiB limit) against the same app without threads,
 * with the body framed by `framing` (`{}`: a Content-Length; `transfer-encoding: chunked`): each
 * answer (201, 204, 507, with headers and Error bodies) is main's, on both threads; the bytes
 * stored are the bytes sent, readable through any listener at once; one beyond a thread's
 * budget goes to main, whose 507 it is, and nothing is stored.
 */
export async function compareUploads(t: Test, framing: Record<string, string>): Promise<void> {
  const mem = { auth: { enable: false }, max_size_mbytes: 1, purge: false };
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: mem } }) });
  const ref = await startApp(t, { config: threadsConfig(0, { storage: { memory: mem } }) });
  const put = (base: string, path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> =>
    fresh(`${base}/memfs${path}`, { method: 'PUT', body, headers: { ...framing, ...headers } });
  const origin = { origin: 'https://example.com' };
  // created (201), a new path each time
  const created = await put(ref.url, '/c-ref.ts', 'first', origin);
  t.equal(created.status, 201);
  t.same(await spread(app, 'served', async (n) => {
    const r = await put(app.url, `/c-${n}.ts`, 'first', origin);
    return { ...r, headers: { ...r.headers, 'content-location': r.headers['content-location']?.replace(`/c-${n}.ts`, '/c-ref.ts') } };
  }, created), []);
  // replaced (204), and read back through any listener right after the answer
  await put(ref.url, '/r.ts', 'v0');
  const replaced = await put(ref.url, '/r.ts', 'v1');
  t.equal(replaced.status, 204);
  await put(app.url, '/r.ts', 'v0');
  let stale = 0;
  t.same(await spread(app, 'served', async (n) => {
    const body = randomBytes(5000 + n);
    const r = await put(app.url, '/r.ts', body);
    if (sha((await fresh(`${app.url}/memfs/r.ts`)).body) !== sha(body)) stale++;
    return r;
  }, replaced), []);
  t.equal(stale, 0, 'a read after the answer gets the bytes sent, whichever thread it reaches');
  // 507 (full) with main's Error body; the refused path stays absent
  const big = Buffer.alloc(700_000, 1);
  await put(ref.url, '/big.ts', big);
  await put(app.url, '/big.ts', big);
  const full = await put(ref.url, '/more.ts', big);
  t.equal(full.status, 507);
  t.same(await spread(app, 'served', () => put(app.url, '/more.ts', big), full), []);
  t.equal((await fresh(`${app.url}/memfs/more.ts`)).status, 404);
  // beyond a thread's budget (the 1 MiB limit): main receives it, whose 507 it is
  const huge = Buffer.alloc(1_500_000, 2);
  const tooBig = await put(ref.url, '/huge.ts', huge);
  t.equal(tooBig.status, 507);
  t.same(await spread(app, 'forwarded', () => put(app.url, '/huge.ts', huge), tooBig), []);
  t.notOk((await memNames(app)).includes('/huge.ts'));
}

/** Runs ffmpeg with `args` until it exits (killed in teardown); its stderr is kept. */
export function runFfmpeg(t: TestLike, args: string[]): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn('ffmpeg', ['-hide_banner', '-nostdin', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => { err += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, stderr: () => err, exited };
}

/** Requests a thread answered itself (`served`), passed to main (`forwarded`), or either (`handled`). */
function count(s: { served: number; forwarded: number }, key: 'served' | 'forwarded' | 'handled'): number {
  return key === 'handled' ? s.served + s.forwarded : s[key];
}
