import t from 'tap';
import { writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { startFs, rawRequest } from '../memfs/fs-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

t.test('the disk cache: MISS then HIT, skips by method, type, size and status', async (t) => {
  const app = await startFs(t, { storage: { disk: { cache: { enable: true, ttl_seconds: 60, max_file_size_mbytes: 1 } } } });
  const disk = join(app.dir, 'disk');
  await writeFile(join(disk, 'a.js'), 'let a = 1;');

  let r = await rawRequest(app.url, 'GET', '/a.js');
  t.equal(r.status, 200);
  t.equal(r.headers['x-cache'], 'MISS');
  t.equal(r.headers['cache-control'], 'max-age=60');
  r = await rawRequest(app.url, 'GET', '/a.js');
  t.equal(r.text, 'let a = 1;');
  t.match(r.headers['x-cache'], /^HIT \d+\.\d{3}$/);
  t.match(r.headers['cache-control'], /^max-age=(59|60)$/);
  t.equal(r.headers['content-type'], 'text/javascript');
  t.ok(r.headers.etag && r.headers['last-modified'], 'a hit keeps ETag and Last-Modified');
  r = await rawRequest(app.url, 'GET', '/a.js', { headers: { 'if-none-match': r.headers.etag as string } });
  t.equal(r.status, 304, 'conditional requests work on hits');
  r = await rawRequest(app.url, 'GET', '/a.js', { headers: { range: 'bytes=4-4' } });
  t.equal(r.status, 206);
  t.equal(r.text, 'a');

  r = await rawRequest(app.url, 'HEAD', '/a.js');
  t.equal(r.headers['x-cache'], 'SKIP ONLYGET');
  await writeFile(join(disk, 'p.m3u8'), '#EXTM3U\n');
  r = await rawRequest(app.url, 'GET', '/p.m3u8');
  t.equal(r.headers['x-cache'], 'SKIP EXT', 'playlists are blocked by default');
  await writeFile(join(disk, 'big.mp4'), Buffer.alloc(1024 * 1024 + 1));
  r = await rawRequest(app.url, 'GET', '/big.mp4');
  t.equal(r.status, 200);
  t.equal(r.body.length, 1024 * 1024 + 1);
  t.equal(r.headers['x-cache'], 'SKIP TOOBIG');
  r = await rawRequest(app.url, 'GET', '/missing.js');
  t.equal(r.status, 404);
  t.equal(r.headers['x-cache'], 'SKIP NOTOK');
  r = await rawRequest(app.url, 'GET', '/api/v3/fs/disk/a.js');
  t.equal(r.headers['x-cache'], undefined, 'the API is not cached');
});

t.test('the cache never serves stale content', async (t) => {
  const app = await startFs(t);
  const disk = join(app.dir, 'disk');
  await writeFile(join(disk, 'index.html'), 'v1');
  t.equal((await rawRequest(app.url, 'GET', '/')).headers['x-cache'], 'MISS');
  t.match((await rawRequest(app.url, 'GET', '/')).headers['x-cache'], /^HIT/);

  let r = await app.request('PUT', '/api/v3/fs/disk/index.html', { raw: 'v2' });
  t.equal(r.status, 204);
  const g = await rawRequest(app.url, 'GET', '/');
  t.equal(g.text, 'v2', 'a PUT through the API evicts the folder entry of index.html');
  t.equal(g.headers['x-cache'], 'MISS');

  // ffmpeg (or anyone) replacing the file on disk directly, as it does for playlists
  await writeFile(join(disk, 'tmp.html'), 'v3');
  await rename(join(disk, 'tmp.html'), join(disk, 'index.html'));
  r = await app.request('GET', '/');
  t.equal(r.text, 'v3', 'a file changed behind the service is noticed on the next hit');

  await app.request('DELETE', '/api/v3/fs/disk/index.html');
  t.equal((await app.request('GET', '/')).status, 404, 'a delete evicts');
});

t.test('cache entries expire after the TTL; the LRU stays within its size', async (t) => {
  const app = await startFs(t, { storage: { disk: { cache: { ttl_seconds: 1, max_size_mbytes: 1, max_file_size_mbytes: 1, types: { allow: ['.bin'], block: [] } } } } });
  const disk = join(app.dir, 'disk');
  await writeFile(join(disk, 'x.bin'), 'x');
  await writeFile(join(disk, 'x.txt'), 'x');
  t.equal((await rawRequest(app.url, 'GET', '/x.txt')).headers['x-cache'], 'SKIP EXT', 'not in the allow list');
  t.equal((await rawRequest(app.url, 'GET', '/x.bin')).headers['x-cache'], 'MISS');
  await waitFor(async () => (await rawRequest(app.url, 'GET', '/x.bin')).headers['x-cache'] === 'MISS', { what: 'expiry after 1 s', interval: 200 });

  for (const n of [1, 2, 3]) await writeFile(join(disk, `${n}.bin`), Buffer.alloc(400 * 1024, n));
  for (const n of [1, 2, 3]) t.equal((await rawRequest(app.url, 'GET', `/${n}.bin`)).headers['x-cache'], 'MISS');
  // 1.2 MiB do not fit in 1 MiB: the least recently used (1.bin) went
  t.match((await rawRequest(app.url, 'GET', '/3.bin')).headers['x-cache'], /^HIT/);
  t.match((await rawRequest(app.url, 'GET', '/2.bin')).headers['x-cache'], /^HIT/);
  t.equal((await rawRequest(app.url, 'GET', '/1.bin')).headers['x-cache'], 'MISS');
});

t.test('with the cache disabled there is no X-Cache header', async (t) => {
  const app = await startFs(t, { storage: { disk: { cache: { enable: false } } } });
  await writeFile(join(app.dir, 'disk/a.css'), 'a{}');
  const r = await rawRequest(app.url, 'GET', '/a.css');
  t.equal(r.status, 200);
  t.equal(r.headers['x-cache'], undefined);
});
