import t from 'tap';
import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { startFs, rawRequest, basic } from '../memfs/fs-helpers.ts';

t.test('the public disk mount', async (t) => {
  const app = await startFs(t, { storage: { cors: { origins: ['https://site.example'] } } });
  const disk = join(app.dir, 'disk');
  await writeFile(join(disk, 'index.html'), '<h1>home</h1>');
  await mkdir(join(disk, 'docs'));
  await writeFile(join(disk, 'docs/index.html'), '<h1>docs</h1>');
  await writeFile(join(disk, 'docs/style.css'), 'body{}');

  t.test('GET serves files; folders serve index.html; 404 File not found', async (t) => {
    let r = await app.request('GET', '/');
    t.equal(r.status, 200);
    t.equal(r.text, '<h1>home</h1>');
    t.equal(r.headers.get('content-type'), 'text/html');
    for (const p of ['/docs', '/docs/']) {
      r = await app.request('GET', p);
      t.equal(r.status, 200, p);
      t.equal(r.text, '<h1>docs</h1>');
    }
    r = await app.request('GET', '/docs/style.css');
    t.equal(r.headers.get('content-type'), 'text/css');
    t.ok(r.headers.get('last-modified'));
    r = await app.request('GET', '/docs/missing.js');
    t.equal(r.status, 404);
    t.same(r.body, { code: 404, message: 'File not found', details: ['/docs/missing.js'] });
    r = await app.request('HEAD', '/docs/style.css');
    t.equal(r.status, 200);
    t.equal(r.headers.get('content-length'), '6');
    await mkdir(join(disk, 'empty'));
    t.equal((await app.request('GET', '/empty')).status, 404, 'a folder without index.html');
  });

  t.test('the disk mount is read-only: PUT and DELETE on it are 404', async (t) => {
    t.equal((await app.request('PUT', '/docs/new.txt', { raw: 'x' })).status, 404);
    t.equal((await app.request('DELETE', '/docs/style.css')).status, 404);
    t.equal((await app.request('GET', '/docs/style.css')).status, 200);
  });

  t.test('the catch-all shadows neither the API, /ping, nor /memfs', async (t) => {
    let r = await app.request('GET', '/api/nothing/here');
    t.equal(r.status, 404);
    t.same(r.body, { code: 404, message: 'Not Found', details: ['Not Found'] });
    r = await app.request('HEAD', '/api/v3/nothing');
    t.equal(r.status, 404);
    r = await app.request('GET', '/api/v3/fs');
    t.equal(r.status, 200);
    r = await app.request('GET', '/ping');
    t.equal(r.text, 'pong');
    await app.request('PUT', '/memfs/m.txt', { raw: 'from mem', headers: basic() });
    t.equal((await app.request('GET', '/memfs/m.txt')).text, 'from mem');
    r = await app.request('GET', '/metrics');
    t.equal(r.status, 404, 'a disabled feature path falls through to the disk');
    t.same(r.body.details, ['/metrics']);
    // the disk's own api folder stays behind the API, however its name is written
    await mkdir(join(disk, 'api'), { recursive: true });
    await writeFile(join(disk, 'api', 'hidden.txt'), 'the disk\'s api folder');
    for (const p of ['/api/hidden.txt', '/%61pi/hidden.txt', '/%61%70%69/hidden.txt', '/%41pi/hidden.txt', '/./api/hidden.txt', '/%2e/api/hidden.txt', '/api%2fhidden.txt', '/api%2Fhidden.txt']) {
      // raw: fetch would clean `/./` and `%2e` away first
      const raw = await rawRequest(app.url, 'GET', p);
      t.not(raw.text, 'the disk\'s api folder', `${p}: not the disk's file (${raw.status})`);
    }
  });

  t.test('CORS on the mount; every OPTIONS is 204, /api with origin *', async (t) => {
    let r = await rawRequest(app.url, 'GET', '/docs/style.css', { headers: { origin: 'https://site.example' } });
    t.equal(r.headers['access-control-allow-origin'], 'https://site.example');
    r = await rawRequest(app.url, 'GET', '/docs/style.css', { headers: { origin: 'https://other.example' } });
    t.equal(r.headers['access-control-allow-origin'], undefined);
    r = await rawRequest(app.url, 'OPTIONS', '/anything/at/all', { headers: { origin: 'https://site.example', 'access-control-request-method': 'GET' } });
    t.equal(r.status, 204);
    t.equal(r.headers['access-control-allow-origin'], 'https://site.example');
    r = await rawRequest(app.url, 'OPTIONS', '/api/v3/process', { headers: { origin: 'https://other.example' } });
    t.equal(r.status, 204);
    t.equal(r.headers['access-control-allow-origin'], '*');
  });

  t.test('HLS playlists lose the absolute disk prefix on the public mount only', async (t) => {
    const text = `#EXTM3U\n#EXTINF:2.0,\n${disk}/hls/s0.ts\n#EXTINF:2.0,\ns1.ts\n`;
    await mkdir(join(disk, 'hls'));
    await writeFile(join(disk, 'hls/p.m3u8'), text);
    const r = await rawRequest(app.url, 'GET', '/hls/p.m3u8');
    t.equal(r.status, 200);
    t.equal(r.text, '#EXTM3U\n#EXTINF:2.0,\n/hls/s0.ts\n#EXTINF:2.0,\ns1.ts\n');
    t.equal(r.headers['content-length'], String(r.body.length));
    t.equal(r.headers['cache-control'], 'private');
    t.equal(r.headers['content-type'], 'application/vnd.apple.mpegurl');
    const api = await rawRequest(app.url, 'GET', '/api/v3/fs/disk/hls/p.m3u8');
    t.equal(api.text, text, 'the API serves the file as it is');
    // past 4 MiB a playlist is served as it is, streamed, not read whole per request
    const big = `#EXTM3U\n${`#EXTINF:2.0,\n${disk}/hls/s0.ts\n`.repeat(Math.ceil((4 * 1024 * 1024) / (disk.length + 20)))}`;
    await writeFile(join(disk, 'hls/big.m3u8'), big);
    const b = await rawRequest(app.url, 'GET', '/hls/big.m3u8');
    t.equal(b.status, 200);
    t.equal(b.body.length, Buffer.byteLength(big), 'as it is');
    t.ok(b.text.includes(`${disk}/hls/s0.ts`), 'not rewritten');
  });

  t.test('a symlink inside the root to a file inside is a 301 to its target', async (t) => {
    await symlink(join(disk, 'docs/style.css'), join(disk, 'link.css'));
    const r = await fetch(`${app.url}/link.css`, { redirect: 'manual' });
    t.equal(r.status, 301);
    t.equal(r.headers.get('location'), '/docs/style.css');
    const a = await fetch(`${app.url}/api/v3/fs/disk/link.css`, { redirect: 'manual' });
    t.equal(a.status, 301);
    t.equal(a.headers.get('location'), '/api/v3/fs/disk/docs/style.css');
  });
});

t.test('gzip of streamed and cached disk files; types from storage.mimetypes_file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-mime-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'mime.types'), '# custom\ntext/html html htm\napplication/x-foo .foo\n');
  const app = await startFs(t, { storage: { mimetypes_file: join(dir, 'mime.types') } });
  const html = `<html>${'<p>hello</p>'.repeat(200)}</html>`;
  await writeFile(join(app.dir, 'disk/page.html'), html);
  await writeFile(join(app.dir, 'disk/x.foo'), 'foo');
  await writeFile(join(app.dir, 'disk/x.css'), 'a{}');
  for (const path of ['/api/v3/fs/disk/page.html', '/page.html', '/page.html']) {
    const r = await rawRequest(app.url, 'GET', path, { headers: { 'accept-encoding': 'gzip, deflate' } });
    t.equal(r.status, 200, path);
    t.equal(r.headers['content-encoding'], 'gzip', `${path} (${r.headers['x-cache'] ?? 'api'})`);
    t.equal(gunzipSync(r.body).toString(), html);
  }
  t.equal((await rawRequest(app.url, 'GET', '/x.foo')).headers['content-type'], 'application/x-foo');
  t.equal((await rawRequest(app.url, 'GET', '/x.css')).headers['content-type'], 'text/html', 'not in the file: the mount default');
  t.equal((await rawRequest(app.url, 'GET', '/api/v3/fs/disk/x.css')).headers['content-type'], 'application/data', 'the API default');
});

t.test('with API auth on, unknown /api paths still need a token (401 before 404)', async (t) => {
  const app = await startFs(t, { api: { auth: { enable: true, username: 'u', password: 'p', jwt: { secret: 's3cr3t-s3cr3t-s3cr3t' } } } });
  await writeFile(join(app.dir, 'disk/pub.txt'), 'public');
  t.equal((await app.request('GET', '/api/unknown')).status, 401);
  t.equal((await app.request('GET', '/api/v3/fs/disk')).status, 401);
  t.equal((await app.request('GET', '/pub.txt')).status, 200, 'the disk mount stays public');
  t.equal((await app.request('GET', '/memfs/none')).status, 404, 'memfs reads stay public');
});

t.test('the service\'s own files are never served when db.dir lies below the disk root', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-disk-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'db'), { recursive: true });
  await writeFile(join(dir, 'db/config.json'), '{"secret":1}');
  await writeFile(join(dir, 'other.txt'), 'ok');
  const app = await startFs(t, { db: { dir: join(dir, 'db') }, storage: { disk: { dir } } });
  for (const p of ['/db/config.json', '/db/db.json', '/api/v3/fs/disk/db/config.json']) {
    t.equal((await app.request('GET', p)).status, 404, p);
  }
  t.equal((await app.request('GET', '/other.txt')).text, 'ok');
  const list = await app.request('GET', '/api/v3/fs/disk');
  t.notOk(list.body.some((f: any) => f.name.startsWith('/db/config') || f.name.startsWith('/db/db.json')), 'not listed');
  t.equal((await app.request('PUT', '/api/v3/fs/disk/db/config.json', { raw: '{}' })).status, 403);
  t.equal((await app.request('DELETE', '/api/v3/fs/disk/db/config.json')).status, 404);
});
