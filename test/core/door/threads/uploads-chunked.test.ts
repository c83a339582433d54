import t from 'tap';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { compareUploads, fresh, memNames as names, sha, spread, threadsConfig, type Answer } from './helpers.ts';

/* Chunked memfs uploads (no Content-Length, as ffmpeg sends its HLS) on the serving threads. */

const te = { 'transfer-encoding': 'chunked' };
const put = (base: string, path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<Answer> =>
  fresh(`${base}/memfs${path}`, { method: 'PUT', body, headers: { ...te, ...headers } });

t.test('chunked uploads within a thread\'s budget are committed by main: its statuses, headers, Error bodies and bytes', async (t) => {
  await compareUploads(t, te);
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
