import t from 'tap';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import { startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { fresh, threadsConfig } from '../../core/door/threads/helpers.ts';

/* disk-fs reads answered by the serving threads: the same answer as main's, byte for byte. */

type Answer = { status: number; body: Buffer; headers: IncomingHttpHeaders };
// per connection or per moment: never part of the comparison
const VOLATILE = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
const comparable = (a: Answer) => ({
  status: a.status, body: a.body.toString('base64'),
  headers: Object.fromEntries(Object.entries(a.headers).filter(([k]) => !VOLATILE.has(k)).sort(([x], [y]) => x.localeCompare(y))),
});

/** An app with 2 threads and a reference app with none, serving the same disk folder. */
async function pair(t: TestLike, disk: Record<string, unknown> = {}): Promise<{ app: TestApp; ref: TestApp; dir: string }> {
  const app = await startApp(t, { config: threadsConfig(2, { storage: { memory: { auth: { enable: false } }, disk } }) });
  const dir = join(app.dir, 'disk');
  const ref = await startApp(t, { config: threadsConfig(0, { storage: { memory: { auth: { enable: false } }, disk: { ...disk, dir } } }) });
  return { app, ref, dir };
}

/**
 * Asks `app` over fresh connections (the kernel spreads them over main and both threads) until
 * each thread answered requests itself (`served`), passed them to main (`forwarded`) or either
 * (`handled`), and returns every answer that differs from `want`.
 */
async function spread(app: TestApp, path: string, want: Answer, opts: { method?: string; headers?: Record<string, string>; key?: 'served' | 'forwarded' | 'handled' } = {}): Promise<string[]> {
  const wrong: string[] = [];
  const before = await app.service.threads.stats();
  const key = opts.key ?? 'served';
  const count = (s: { served: number; forwarded: number }) => (key === 'handled' ? s.served + s.forwarded : s[key]);
  await waitFor(async () => {
    for (let n = 0; n < 6; n++) {
      const got = await fresh(`${app.url}${path}`, { method: opts.method, headers: opts.headers });
      if (JSON.stringify(comparable(got)) !== JSON.stringify(comparable(want))) wrong.push(`${path}: ${JSON.stringify(comparable(got)).slice(0, 400)}`);
    }
    const now = await app.service.threads.stats();
    return now.length === 2 && now.every((s, i) => count(s) > count(before[i]!));
  }, { timeout: 30_000, what: `both threads ${key} ${path}` });
  return wrong;
}

t.test('threads answer disk files with the same bytes and headers as main (GET, HEAD, CORS)', async (t) => {
  const { app, ref, dir } = await pair(t, { cache: { enable: false } });
  await mkdir(join(dir, 'live'), { recursive: true });
  await writeFile(join(dir, 'live', 'seg.ts'), randomBytes(300_000));
  await writeFile(join(dir, 'note.txt'), 'short text');
  await writeFile(join(dir, 'empty.bin'), '');
  for (const [path, method, headers] of [
    ['/live/seg.ts', 'GET', {}], ['/live/seg.ts', 'HEAD', {}], ['/note.txt', 'GET', { origin: 'https://example.com' }], ['/empty.bin', 'GET', {}],
  ] as const) {
    const want = await fresh(`${ref.url}${path}`, { method, headers });
    t.equal(want.status, 200);
    t.same(await spread(app, path, want, { method, headers }), [], `${method} ${path}: every answer as main's`);
  }
});

t.test('traversal, links out of the root and misses get main\'s status on a thread', async (t) => {
  const { app, ref, dir } = await pair(t, { cache: { enable: false } });
  const outside = await mkdtemp(join(tmpdir(), 'core-outside-'));
  t.teardown(() => rm(outside, { recursive: true, force: true }));
  await writeFile(join(outside, 'secret.ts'), 'secret');
  await symlink(outside, join(dir, 'out'));
  await symlink(join(outside, 'secret.ts'), join(dir, 'secret.ts'));
  // a file named like a route: the route answers, on every listener
  await writeFile(join(dir, 'ping'), 'a file, not the route');
  // traversal in every form main refuses (test/plugins/disk-fs/safety.test.ts)
  const cases: Array<[string, RegExp]> = [
    ['/out/secret.ts', /403/], ['/secret.ts', /403/], ['/%2e%2e/config.json', /400/], ['/../config.json', /400/], ['/a/b/../../../config.json', /400/],
    ['/.%2e/config.json', /400/], ['//etc/passwd', /400/], ['/missing.ts', /404/], ['/ping', /200/],
  ];
  for (const [path, status] of cases) {
    const want = await fresh(`${ref.url}${path}`);
    t.match(String(want.status), status, `main: ${path} ${want.status}`);
    // the door's own refusals (400 for a bad path) come from the thread's copy of it, the rest from main
    t.same(await spread(app, path, want, { key: 'handled' }), [], `${path}: main's answer through every thread`);
  }
  t.equal((await fresh(`${app.url}/ping`)).body.toString(), 'pong');
});

t.test('with the HTTP cache on, main answers the disk reads of every listener (its X-Cache header)', async (t) => {
  const { app, ref, dir } = await pair(t, { cache: { enable: true, max_file_size_mbytes: 1 } });
  await writeFile(join(dir, 'big.ts'), randomBytes(1024 * 1024 + 10));
  await writeFile(join(dir, 'small.ts'), randomBytes(5000));
  for (const [path, method] of [['/big.ts', 'GET'], ['/small.ts', 'HEAD']] as const) {
    const want = await fresh(`${ref.url}${path}`, { method });
    t.match(want.headers['x-cache'], /^SKIP/);
    t.same(await spread(app, path, { ...want }, { method, key: 'forwarded' }), [], `${method} ${path}`);
  }
  // a file main's cache keeps: main answers it on every listener (a thread never says MISS or HIT)
  const seen = new Set<string>();
  for (let n = 0; n < 12; n++) seen.add(String((await fresh(`${app.url}/small.ts`)).headers['x-cache']).split(' ')[0]!);
  t.same([...seen].filter((s) => s !== 'MISS' && s !== 'HIT'), []);
  t.ok(seen.has('HIT'));
});

t.test('with sessions on, threads answer disk segments and the viewer\'s session counts them (playlists stay on main)', async (t) => {
  const app = await startApp(t, { config: threadsConfig(2, {
    sessions: { enable: true, ip_ignorelist: [], session_timeout_sec: 60 }, storage: { memory: { auth: { enable: false } }, disk: { cache: { enable: false } } },
  }) });
  const dir = join(app.dir, 'disk');
  const size = 40_000;
  await writeFile(join(dir, 'seg0.ts'), Buffer.alloc(size, 0x47));
  await writeFile(join(dir, 'p.m3u8'), '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:1.0,\nseg0.ts\n');
  const own = (await fresh(`${app.url}/p.m3u8`)).body.toString().split('\n').find((l) => l.includes('session='))!;
  const seg = (await fresh(`${app.url}/${own}`)).body.toString().split('\n').find((l) => l.startsWith('seg0.ts'))!;
  t.match(seg, /session=/);
  let count = 0;
  const before = await app.service.threads.stats();
  await waitFor(async () => {
    for (let n = 0; n < 6; n++, count++) t.equal((await fresh(`${app.url}/${seg}`)).body.length, size);
    const now = await app.service.threads.stats();
    return now.every((s, i) => s.served > before[i]!.served);
  }, { timeout: 30_000, what: 'both threads answering disk segments' });
  const id = seg.split('session=')[1];
  const session = await waitFor(async () => {
    const list = (await app.request('GET', '/api/v3/session/active?collectors=hls')).body.hls as Array<{ id: string; bytes_tx: number }>;
    const s = list.find((x) => x.id === id);
    return s && s.bytes_tx >= count * size ? s : undefined;
  }, { timeout: 20_000, what: 'the session counting every segment' });
  t.ok(session.bytes_tx < count * (size + 400) + 5_000, `counted once (${session.bytes_tx} for ${count} segments)`);
});
