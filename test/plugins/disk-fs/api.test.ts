import t from 'tap';
import { readFile, readdir, writeFile, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from 'node:net';
import { startFs, rawRequest } from '../memfs/fs-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

t.test('the /api/v3/fs/disk API', async (t) => {
  const app = await startFs(t);
  const disk = join(app.dir, 'disk');

  t.test('PUT creates parents (201), overwrites (204); the file is on disk', async (t) => {
    let r = await app.request('PUT', '/api/v3/fs/disk/rec/2024/a.mp4', { raw: Buffer.from('first') });
    t.equal(r.status, 201);
    t.equal(r.headers.get('content-location'), '/api/v3/fs/disk/rec/2024/a.mp4');
    t.equal(await readFile(join(disk, 'rec/2024/a.mp4'), 'utf8'), 'first');
    r = await app.request('PUT', '/api/v3/fs/disk/rec/2024/a.mp4', { raw: Buffer.from('second') });
    t.equal(r.status, 204);
    t.equal(await readFile(join(disk, 'rec/2024/a.mp4'), 'utf8'), 'second');
    t.same((await readdir(join(disk, 'rec/2024'))), ['a.mp4'], 'no temp files left');
  });

  t.test('GET: 200 with type, default application/data; 404 with the path', async (t) => {
    let r = await app.request('GET', '/api/v3/fs/disk/rec/2024/a.mp4');
    t.equal(r.status, 200);
    t.equal(r.text, 'second');
    t.equal(r.headers.get('content-type'), 'video/mp4');
    t.equal(r.headers.get('content-length'), '6');
    t.ok(r.headers.get('etag'));
    await writeFile(join(disk, 'noext'), 'x');
    r = await app.request('GET', '/api/v3/fs/disk/noext');
    t.equal(r.headers.get('content-type'), 'application/data');
    r = await app.request('GET', '/api/v3/fs/disk/missing.txt');
    t.equal(r.status, 404);
    t.same(r.body, { code: 404, message: 'File not found', details: ['/missing.txt'] });
    r = await app.request('HEAD', '/api/v3/fs/disk/rec/2024/a.mp4');
    t.equal(r.status, 200);
    t.equal(r.headers.get('content-length'), '6');
  });

  t.test('a folder serves its index.html through the API too', async (t) => {
    await app.request('PUT', '/api/v3/fs/disk/site/index.html', { raw: '<p>site</p>' });
    const r = await app.request('GET', '/api/v3/fs/disk/site');
    t.equal(r.status, 200);
    t.equal(r.text, '<p>site</p>');
    t.equal(r.headers.get('content-type'), 'text/html');
    t.equal((await app.request('GET', '/api/v3/fs/disk/rec')).status, 404, 'a folder without index.html is 404');
  });

  t.test('byte ranges on disk files (seeking in recordings)', async (t) => {
    await writeFile(join(disk, 'rec/long.mp4'), Buffer.from('abcdefghijklmnopqrstuvwxyz'));
    let r = await rawRequest(app.url, 'GET', '/api/v3/fs/disk/rec/long.mp4', { headers: { range: 'bytes=10-12' } });
    t.equal(r.status, 206);
    t.equal(r.text, 'klm');
    t.equal(r.headers['content-range'], 'bytes 10-12/26');
    r = await rawRequest(app.url, 'GET', '/rec/long.mp4', { headers: { range: 'bytes=-3' } });
    t.equal(r.status, 206);
    t.equal(r.text, 'xyz');
    r = await rawRequest(app.url, 'GET', '/rec/long.mp4', { headers: { range: 'bytes=26-' } });
    t.equal(r.status, 416);
    t.equal(r.headers['content-range'], 'bytes */26');
  });

  t.test('DELETE: 200 then 404; folders are not files', async (t) => {
    let r = await app.request('DELETE', '/api/v3/fs/disk/rec/2024/a.mp4');
    t.equal(r.status, 200);
    t.equal(r.text, 'Deleted: /rec/2024/a.mp4');
    await t.rejects(stat(join(disk, 'rec/2024/a.mp4')));
    r = await app.request('DELETE', '/api/v3/fs/disk/rec/2024/a.mp4');
    t.equal(r.status, 404);
    t.same(r.body.details, ['/rec/2024/a.mp4']);
    r = await app.request('DELETE', '/api/v3/fs/disk/rec');
    t.equal(r.status, 404);
    r = await app.request('PUT', '/api/v3/fs/disk/rec', { raw: 'x' });
    t.equal(r.status, 400, 'PUT over a folder');
  });

  t.test('listing: files only, recursive, absolute names, glob/sort/order', async (t) => {
    await mkdir(join(disk, 'l/deep'), { recursive: true });
    await writeFile(join(disk, 'l/b.ts'), 'bb');
    await writeFile(join(disk, 'l/a.ts'), 'a');
    await writeFile(join(disk, 'l/deep/c.ts'), 'ccc');
    let r = await app.request('GET', '/api/v3/fs/disk?glob=/l/**&sort=name');
    t.equal(r.status, 200);
    t.same(r.body.map((f: any) => [f.name, f.size_bytes]), [['/l/a.ts', 1], ['/l/b.ts', 2], ['/l/deep/c.ts', 3]]);
    r = await app.request('GET', '/api/v3/fs/disk?glob=/l/*.ts&sort=size&order=desc');
    t.same(r.body.map((f: any) => f.name), ['/l/b.ts', '/l/a.ts']);
    r = await app.request('GET', '/api/v3/fs/disk');
    t.ok(r.body.every((f: any) => f.name.startsWith('/') && typeof f.last_modified === 'number'));
  });
});

t.test('disk capacity: 507, the old file intact, no temp file left', async (t) => {
  const app = await startFs(t, { storage: { disk: { max_size_mbytes: 1 } } });
  const disk = join(app.dir, 'disk');
  let r = await app.request('PUT', '/api/v3/fs/disk/a.bin', { raw: Buffer.alloc(700 * 1024, 1) });
  t.equal(r.status, 201);
  r = await app.request('PUT', '/api/v3/fs/disk/b.bin', { raw: Buffer.alloc(700 * 1024, 2) });
  t.equal(r.status, 507);
  t.same(r.body, { code: 507, message: 'Insufficient Storage', details: ['not enough space on device'] });
  r = await app.request('PUT', '/api/v3/fs/disk/a.bin', { raw: Buffer.alloc(2 * 1024 * 1024, 3) });
  t.equal(r.status, 507);
  t.same(r.body.details, ['File is too big']);
  const a = await readFile(join(disk, 'a.bin'));
  t.equal(a.length, 700 * 1024);
  t.equal(a[0], 1, 'the old content is intact');
  t.same((await readdir(disk)).sort(), ['a.bin'], 'nothing else on disk');
  r = await app.request('PUT', '/api/v3/fs/disk/a.bin', { raw: Buffer.alloc(900 * 1024, 4) });
  t.equal(r.status, 204, 'the old size counts as free when replacing');
});

t.test('an aborted disk upload leaves the old file and no temp file', async (t) => {
  const app = await startFs(t);
  const disk = join(app.dir, 'disk');
  await app.request('PUT', '/api/v3/fs/disk/keep.mp4', { raw: 'old' });
  const u = new URL(app.url);
  const sock = connect(Number(u.port), u.hostname);
  await new Promise((r) => sock.once('connect', r));
  sock.write('PUT /api/v3/fs/disk/keep.mp4 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n');
  await new Promise((r) => sock.write(Buffer.alloc(200_000, 1), r));
  // wait until the server is writing the temp file, then cut the connection
  await waitFor(async () => (await readdir(disk)).some((n) => n.endsWith('.upload')), { what: 'temp upload file' });
  t.equal((await app.request('GET', '/api/v3/fs/disk')).body.length, 1, 'an upload in progress is not listed');
  sock.destroy();
  await waitFor(async () => (await readdir(disk)).length === 1, { what: 'temp file removed' });
  t.equal(await readFile(join(disk, 'keep.mp4'), 'utf8'), 'old');
});
