import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { startApp, type TestApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, spread, threadsConfig, type Answer } from './helpers.ts';

/* Chunked memfs uploads (no Content-Length, as ffmpeg sends its HLS) on the serving threads. */

const te = { 'transfer-encoding': 'chunked' };
const put = (base: string, path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> =>
  fresh(`${base}/memfs${path}`, { method: 'PUT', body, headers: { ...te, ...headers } });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const names = async (app: TestApp) => ((await app.request('GET', '/api/v3/fs/mem')).body as { name: string }[]).map((f) => f.name);

t.test('chunked uploads within a thread\'s budget are committed by main: its statuses, headers, Error bodies and bytes', async (t) => {
  const mem = { auth: { enable: false }, max_size_mbytes: 1, purge: false };
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: mem } }) });
  const ref = await startApp(t, { config: threadsConfig(0, { storage: { memory: mem } }) });
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
  t.equal(stale, 0, 'the stored bytes are the bytes sent');
  // 507 (full) with main's Error body; the refused path stays absent
  const big = Buffer.alloc(700_000, 1);
  await put(ref.url, '/big.ts', big);
  await put(app.url, '/big.ts', big);
  const full = await put(ref.url, '/more.ts', big);
  t.equal(full.status, 507);
  t.same(await spread(app, 'served', () => put(app.url, '/more.ts', big), full), []);
  t.equal((await fresh(`${app.url}/memfs/more.ts`)).status, 404);
  // beyond the budget (the 1 MiB limit): the thread passes what it read and the rest to main, whose 507 it is
  const huge = Buffer.alloc(1_500_000, 2);
  const tooBig = await put(ref.url, '/huge.ts', huge);
  t.equal(tooBig.status, 507);
  t.same(await spread(app, 'forwarded', () => put(app.url, '/huge.ts', huge), tooBig), []);
  t.notOk((await names(app)).includes('/huge.ts'));
});

t.test('a chunked upload that outgrows the budget reaches main with every byte (no limit: 64 MiB per thread)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: { auth: { enable: false }, max_size_mbytes: 0 } } }) });
  const before = await app.service.threads.stats();
  const results: string[] = [];
  let n = 0;
  await waitFor(async () => {
    const body = randomBytes(64 * 1024 * 1024 + 100_000 + n);
    const r = await put(app.url, '/large.bin', body);
    const back = await fresh(`${app.url}/memfs/large.bin`);
    results.push(`${r.status < 300} ${back.status} ${sha(back.body) === sha(body)}`);
    n++;
    const now = await app.service.threads.stats();
    return now.some((s, i) => s.forwarded > before[i]!.forwarded);
  }, { timeout: 60_000, interval: 0, what: 'a thread passing a large chunked upload to main' });
  t.same(results, results.map(() => 'true 200 true'), 'stored whole, in order, whichever listener took it');
});

/** A chunked PUT that sends part of its body, then drops the connection; resolves when it is closed. */
function abort(url: string): Promise<void> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', agent: false, headers: { ...te, expect: '100-continue' } });
    // after the server took the request (its 100 Continue): part of the body, then gone
    req.on('continue', () => req.write(Buffer.alloc(600_000, 3), () => req.destroy()));
    req.on('error', () => {});
    req.on('close', () => resolve());
  });
}

t.test('an aborted chunked upload stores nothing and leaves the old file', async (t) => {
  // 1 MiB limit: a thread's budget is 1 MiB, so a leaked reservation would send the last uploads to main
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: { auth: { enable: false }, max_size_mbytes: 1 } } }) });
  t.equal((await fresh(`${app.url}/memfs/keep.ts`, { method: 'PUT', body: 'old' })).status, 201);
  const before = await app.service.threads.stats();
  let n = 0;
  await waitFor(async () => {
    for (let i = 0; i < 6; i++) {
      await abort(`${app.url}/memfs/gone-${n++}.ts`);
      await abort(`${app.url}/memfs/keep.ts`);
    }
    const now = await app.service.threads.stats();
    // an aborted upload counts when the thread sees the connection close
    return now.every((s, i) => s.served > before[i]!.served);
  }, { timeout: 30_000, what: 'both threads seeing aborted uploads' });
  t.same((await names(app)).filter((p) => p.startsWith('/gone-')), []);
  const kept = await fresh(`${app.url}/memfs/keep.ts`);
  t.equal(kept.body.toString(), 'old');
  // the budget was given back: an upload of most of it still goes through each thread
  const body = Buffer.alloc(600_000, 4);
  await put(app.url, '/after.ts', body);
  t.same(await spread(app, 'served', () => put(app.url, '/after.ts', body), await put(app.url, '/after.ts', body)), []);
});
