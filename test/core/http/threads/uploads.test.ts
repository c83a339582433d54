import t from 'tap';
import { startApp } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { fresh, spread, threadsConfig } from './helpers.ts';

/* memfs uploads received by the serving threads (writes open) and committed by main. */

t.test('with writes open, threads receive uploads and answer with main\'s status and headers; the file is everywhere at once', async (t) => {
  const mem = { auth: { enable: false }, max_size_mbytes: 1, purge: false };
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: mem } }) });
  const ref = await startApp(t, { config: threadsConfig(0, { storage: { memory: mem } }) });
  const put = (base: string, path: string, body: Buffer | string, headers: Record<string, string> = {}) => fresh(`${base}/memfs${path}`, { method: 'PUT', body, headers });
  const origin = { origin: 'https://example.com' };
  t.equal((await put(ref.url, '/new-ref.ts', 'x', origin)).status, 201);
  // created (201): a new path each time
  const created = await put(ref.url, '/c-ref.ts', 'first', origin);
  t.same(await spread(app, 'served', async (n) => {
    const r = await put(app.url, `/c-${n}.ts`, 'first', origin);
    return { ...r, headers: { ...r.headers, 'content-location': r.headers['content-location']?.replace(`/c-${n}.ts`, '/c-ref.ts') } };
  }, created), []);
  // replaced (204), then read back through any listener: never the old bytes
  await put(ref.url, '/r.ts', 'v0');
  const replaced = await put(ref.url, '/r.ts', 'v1');
  t.equal(replaced.status, 204);
  await put(app.url, '/r.ts', 'v0');
  let stale = 0;
  t.same(await spread(app, 'served', async (n) => {
    const r = await put(app.url, '/r.ts', `v${n + 1}`);
    if ((await fresh(`${app.url}/memfs/r.ts`)).body.toString() !== `v${n + 1}`) stale++;
    return r;
  }, replaced), []);
  t.equal(stale, 0, 'a read after the answer gets the upload, whichever thread it reaches');
  // 507 with main's Error body: over the 1 MiB limit with a file already there
  const big = Buffer.alloc(700_000, 1);
  await put(ref.url, '/big.ts', big);
  await put(app.url, '/big.ts', big);
  const full = await put(ref.url, '/more.ts', big);
  t.equal(full.status, 507);
  t.same(await spread(app, 'served', () => put(app.url, '/more.ts', big), full), []);
  t.equal((await fresh(`${app.url}/memfs/more.ts`)).status, 404);
  // beyond a thread's budget (the 1 MiB limit): main receives them, with its early 507 (chunked: uploads-chunked.test.ts)
  const huge = Buffer.alloc(1_500_000, 2);
  const tooBig = await put(ref.url, '/huge.ts', huge);
  t.equal(tooBig.status, 507);
  t.same(await spread(app, 'forwarded', () => put(app.url, '/huge.ts', huge), tooBig), []);
});

t.test('with memfs auth on, uploads stay forwarded to main (401 without credentials, on every listener)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: { auth: { enable: true, username: 'u', password: 'p' } } } }) });
  const refused = await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x' });
  t.equal(refused.status, 401);
  t.same(await spread(app, 'forwarded', () => fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x' }), refused), []);
  const auth = { authorization: `Basic ${Buffer.from('u:p').toString('base64')}` };
  t.equal((await fresh(`${app.url}/memfs/a.ts`, { method: 'PUT', body: 'x', headers: auth })).status, 201);
});

t.test('uploads a thread received reach onWritten on main (the hlsingress session counts them)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, { sessions: { enable: true, ip_ignorelist: [] } }) });
  const list = '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nseg0.ts\n';
  let sent = 0;
  const before = await app.service.threads.stats();
  await waitFor(async () => {
    for (let i = 0; i < 6; i++, sent += list.length) t.equal((await fresh(`${app.url}/memfs/in/p.m3u8`, { method: 'PUT', body: list })).status < 300, true);
    const now = await app.service.threads.stats();
    return now.every((s, i) => s.served > before[i]!.served);
  }, { timeout: 30_000, what: 'both threads receiving uploads' });
  const session = await waitFor(async () => {
    const all = (await app.request('GET', '/api/v3/session/active?collectors=hlsingress')).body.hlsingress as Array<{ id: string; bytes_rx: number }>;
    const s = all.find((x) => x.id === '/memfs/in/p.m3u8');
    return s && s.bytes_rx >= sent ? s : undefined;
  }, { timeout: 20_000, what: 'the ingress session counting every upload' });
  t.equal(session.bytes_rx, sent, 'each upload counted once');
});
