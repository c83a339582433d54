import t from 'tap';
import { startCli } from '../../helpers/cli.ts';
import { FS_PLUGINS, startFsKit } from './fs-helpers.ts';

/*
 * memfs counts entries, not only bytes (issue 27.3): each file takes 1 KiB plus its name of the
 * limit (`ENTRY_BYTES`, plugins/memfs/entry.ts), so empty files with long names fill it like
 * their bytes would. Before: 20,000 empty files with long names under a 1 MB limit were all
 * stored and added 163 MB.
 */

const MB = 1024 * 1024;
const FULL = { code: 507, message: 'Insufficient Storage', details: ['not enough space on device'] };

t.test('20,000 empty files with long names under a 1 MB limit: refused with 507 once full, RSS bounded', async (t) => {
  const app = await startCli(t, { plugins: FS_PLUGINS, storage: { memory: { max_size_mbytes: 1, auth: { enable: false } } } });
  const N = 20_000;
  const name = (i: number) => `/${String(i).padStart(6, '0')}-${'n'.repeat(2000)}.ts`;
  const statuses: Record<number, number> = {};
  let fullBody: unknown;
  // 16 clients at a time, each a keep-alive connection of fetch's pool
  const run = async (n: number, url: (i: number) => string) => {
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      for (let i = next++; i < n; i = next++) {
        const r = await fetch(url(i), { method: 'PUT', body: '' });
        const body = await r.json().catch(() => undefined);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 507) fullBody ??= body;
      }
    }));
  };
  // the same requests to a filesystem that does not exist first (404): code compiled, heap sized,
  // so what follows measures what the entries hold
  await run(2000, (i) => `${app.url}/api/v3/fs/none${name(i)}`);
  t.equal(statuses[404], 2000, 'warm-up');
  const before = app.memory().rss;
  await run(N, (i) => `${app.url}/api/v3/fs/mem${name(i)}`);
  const stored = statuses[201] ?? 0;
  // each takes 1024 + about 2011 bytes of the 1 MiB
  t.ok(stored > 0 && stored <= Math.ceil(MB / 3000), `only what fits is stored (${stored})`);
  t.equal(statuses[507], N - stored, 'the rest is refused with 507');
  t.same(fullBody, FULL, 'the documented Error body');
  const list = await (await fetch(`${app.url}/api/v3/fs/mem`)).json() as unknown[];
  t.equal(list.length, stored, 'the listing holds what was stored');
  const peak = app.memory().peak;
  t.ok(peak - before < 100 * MB, `peak RSS within 100 MB of before (+${Math.round((peak - before) / MB)} MB)`);
});

t.test('entries count toward the limit: a file, a link, a delete and a purge', async (t) => {
  const app = await startFsKit(t, { storage: { memory: { max_size_mbytes: 1, auth: { enable: false } } } });
  const put = (path: string, raw: string | Buffer) => app.request('PUT', `/api/v3/fs/mem${path}`, { raw });
  const big = await put('/whole.bin', Buffer.alloc(MB));
  t.equal(big.status, 507, 'a file of exactly the limit has no room for its entry');
  t.same(big.body.details, ['File is too big']);

  t.equal((await put('/a.bin', Buffer.alloc(MB - 2500))).status, 201, 'a file that leaves room for its entry fits');
  t.equal((await put('/b.bin', '')).status, 201, 'an empty file takes its entry');
  const full = await put('/c.bin', '');
  t.equal(full.status, 507, 'the next empty file does not fit');
  t.same(full.body, FULL);
  const link = await app.request('PATCH', '/api/v3/fs/mem/l.bin', { raw: '/b.bin' });
  t.equal(link.status, 507, 'a link is an entry too');
  t.equal((await app.request('DELETE', '/api/v3/fs/mem/b.bin')).status, 200);
  t.equal((await put('/c.bin', '')).status, 201, 'a delete gives its entry back');

  const purging = await startFsKit(t, { storage: { memory: { max_size_mbytes: 1, purge: true, auth: { enable: false } } } });
  for (let i = 0; i < 2000; i++) {
    const r = await purging.request('PUT', `/api/v3/fs/mem/${i}-${'p'.repeat(500)}.ts`, { raw: '' });
    if (r.status !== 201) t.fail(`purge makes room (${r.status})`);
  }
  const files = (await purging.request('GET', '/api/v3/fs/mem')).body as Array<{ name: string }>;
  t.ok(files.length < 1000, `with purge the oldest entries go (${files.length} kept of 2000)`);
  t.ok(files.some((f) => f.name.startsWith('/1999-')), 'the newest is kept');
});
