import t from 'tap';
import { request as httpRequest } from 'node:http';
import { s3Unavailable } from '../../helpers/s3.ts';
import { waitFor } from '../../helpers/wait.ts';
import { s3Basic, startS3App } from './helpers.ts';

const skip = s3Unavailable();

/** GET with a Range header, the body as bytes. */
function rangeGet(base: string, path: string, range: string): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { headers: { range } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('an S3 filesystem through /api/v3/fs and its public mount', { skip }, async (t) => {
  const { app } = await startS3App(t);

  t.test('listed by GET /api/v3/fs with type s3 and its mount', async (t) => {
    const r = await app.request('GET', '/api/v3/fs');
    t.same(r.body.find((f: { name: string }) => f.name === 'cloud'), { name: 'cloud', type: 's3', mount: '/cloud' });
  });

  t.test('API: PUT 201, PUT 204, GET, HEAD, DELETE 200 then 404 (the bucket was created at start)', async (t) => {
    let r = await app.request('PUT', '/api/v3/fs/cloud/a/x.txt', { raw: 'one' });
    t.equal(r.status, 201, r.text);
    r = await app.request('PUT', '/api/v3/fs/cloud/a/x.txt', { raw: 'two!' });
    t.equal(r.status, 204);
    r = await app.request('GET', '/api/v3/fs/cloud/a/x.txt');
    t.equal(r.status, 200);
    t.equal(r.text, 'two!');
    t.equal(r.headers.get('content-type'), 'text/plain');
    r = await app.request('HEAD', '/api/v3/fs/cloud/a/x.txt');
    t.equal(r.status, 200);
    t.equal(r.headers.get('content-length'), '4');
    t.ok(r.headers.get('etag'), 'an ETag');
    t.ok(r.headers.get('last-modified'));
    r = await app.request('DELETE', '/api/v3/fs/cloud/a/x.txt');
    t.equal(r.status, 200);
    r = await app.request('DELETE', '/api/v3/fs/cloud/a/x.txt');
    t.equal(r.status, 404);
    t.equal((await app.request('GET', '/api/v3/fs/cloud/a/x.txt')).status, 404);
  });

  t.test('list with globs: * stays in a folder, ** crosses', async (t) => {
    for (const p of ['/live/a.m3u8', '/live/a0.ts', '/live/a1.ts', '/live/sub/b.ts', '/other/c.ts']) {
      t.equal((await app.request('PUT', `/api/v3/fs/cloud${p}`, { raw: p })).status, 201, p);
    }
    const names = async (glob: string) => (await app.request('GET', `/api/v3/fs/cloud?glob=${encodeURIComponent(glob)}&sort=name`)).body.map((f: { name: string }) => f.name);
    t.same(await names('/live/*.ts'), ['/live/a0.ts', '/live/a1.ts']);
    t.same(await names('/live/**'), ['/live/a.m3u8', '/live/a0.ts', '/live/a1.ts', '/live/sub/b.ts']);
    t.same(await names('/**/*.ts'), ['/live/a0.ts', '/live/a1.ts', '/live/sub/b.ts', '/other/c.ts']);
    const all = (await app.request('GET', '/api/v3/fs/cloud')).body;
    t.ok(all.every((f: { size_bytes: number; last_modified: number }) => f.size_bytes > 0 && f.last_modified > 1e9));
  });

  t.test('ranges: 206 with the bytes asked for, streamed from S3; 416 past the end', async (t) => {
    const big = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = i % 251;
    t.equal((await app.request('PUT', '/api/v3/fs/cloud/big.bin', { raw: big })).status, 201);
    let r = await rangeGet(app.url, '/cloud/big.bin', 'bytes=1000-1999');
    t.equal(r.status, 206);
    t.equal(r.headers['content-range'], `bytes 1000-1999/${big.length}`);
    t.ok(r.body.equals(big.subarray(1000, 2000)), 'the bytes of the range');
    r = await rangeGet(app.url, '/api/v3/fs/cloud/big.bin', `bytes=${big.length - 10}-`);
    t.equal(r.status, 206);
    t.ok(r.body.equals(big.subarray(big.length - 10)));
    r = await rangeGet(app.url, '/cloud/big.bin', `bytes=${big.length + 5}-`);
    t.equal(r.status, 416);
  });

  t.test('a large upload goes up as a multipart upload and reads back whole', async (t) => {
    const big = Buffer.alloc(20 * 1024 * 1024, 7);
    big.write('head', 0);
    big.write('tail', big.length - 4);
    t.equal((await app.request('PUT', '/api/v3/fs/cloud/huge.bin', { raw: big })).status, 201);
    const r = await rangeGet(app.url, '/cloud/huge.bin', 'bytes=0-');
    t.equal(r.body.length, big.length);
    t.equal(r.body.subarray(0, 4).toString(), 'head');
    t.equal(r.body.subarray(-4).toString(), 'tail');
  });

  t.test('public mount: reads are open, writes need the mount\'s own Basic auth', async (t) => {
    let r = await app.request('PUT', '/cloud/pub/p.txt', { raw: 'x' });
    t.equal(r.status, 401);
    t.match(r.headers.get('www-authenticate'), /^basic realm=/i);
    r = await app.request('PUT', '/cloud/pub/p.txt', { raw: 'x', headers: s3Basic('uploader', 'wrong') });
    t.equal(r.status, 401);
    t.equal((await app.request('DELETE', '/cloud/pub/p.txt')).status, 401);
    r = await app.request('PUT', '/cloud/pub/p.txt', { raw: 'public', headers: s3Basic() });
    t.equal(r.status, 201);
    r = await app.request('GET', '/cloud/pub/p.txt');
    t.equal(r.status, 200);
    t.equal(r.text, 'public');
    t.equal((await app.request('GET', '/cloud/pub/missing.txt')).status, 404);
    r = await app.request('DELETE', '/cloud/pub/p.txt', { headers: s3Basic() });
    t.equal(r.status, 200);
  });

  t.test('filesystem_* metrics carry the S3 filesystem by name', async (t) => {
    const value = async (name: string) => {
      const r = await app.request('POST', '/api/v3/metrics', { body: { metrics: [{ name, labels: { name: 'cloud' } }] } });
      return r.body.metrics?.[0]?.values?.at(-1)?.[1] as number | undefined;
    };
    const files = await waitFor(async () => { const v = await value('filesystem_files'); return v !== undefined && v >= 5 ? v : undefined; }, { timeout: 30_000, what: 'filesystem_files of cloud' });
    t.ok(files >= 5, `files ${files}`);
    t.ok((await value('filesystem_usage'))! > 20 * 1024 * 1024, 'usage counts the big files');
    t.equal(await value('filesystem_limit'), -1, 'unlimited');
    t.equal(await value('s3fs_lost'), 0, 'nothing lost');
  });
});
