import t from 'tap';
import { gunzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import { basic, startFs, rawRequest } from './fs-helpers.ts';

t.test('public /memfs routes', async (t) => {
  const app = await startFs(t, { storage: { cors: { origins: ['https://player.example', 'https://*.tv.example'] } } });

  t.test('PUT and DELETE need basic auth: 401 without or with wrong credentials, 400 for bad base64', async (t) => {
    let r = await app.request('PUT', '/memfs/a.ts', { raw: 'x' });
    t.equal(r.status, 401);
    t.equal(r.body.code, 401);
    t.match(r.headers.get('www-authenticate'), /^basic realm=/i);
    r = await app.request('PUT', '/memfs/a.ts', { raw: 'x', headers: basic('admin', 'wrong') });
    t.equal(r.status, 401);
    r = await app.request('PUT', '/memfs/a.ts', { raw: 'x', headers: { authorization: 'Basic %%%' } });
    t.equal(r.status, 400);
    r = await app.request('DELETE', '/memfs/a.ts');
    t.equal(r.status, 401);
    t.equal((await app.request('GET', '/memfs/a.ts')).status, 404, 'nothing was written');
  });

  t.test('PUT 201, PUT 204, POST works like PUT, GET 200, DELETE 200 then 404', async (t) => {
    let r = await app.request('PUT', '/memfs/live/x.ts', { raw: 'one', headers: basic() });
    t.equal(r.status, 201);
    t.equal(r.headers.get('content-location'), '/memfs/live/x.ts');
    r = await app.request('PUT', '/memfs/live/x.ts', { raw: 'two', headers: basic() });
    t.equal(r.status, 204);
    r = await app.request('POST', '/memfs/live/y.ts', { raw: 'three', headers: basic() });
    t.equal(r.status, 201);
    r = await app.request('GET', '/memfs/live/x.ts');
    t.equal(r.status, 200);
    t.equal(r.text, 'two');
    t.equal(r.headers.get('content-type'), 'video/MP2T');
    r = await app.request('DELETE', '/memfs/live/x.ts', { headers: basic() });
    t.equal(r.status, 200);
    t.equal(r.text, 'Deleted: /live/x.ts');
    r = await app.request('DELETE', '/memfs/live/x.ts', { headers: basic() });
    t.equal(r.status, 404);
    t.same(r.body, { code: 404, message: 'File not found', details: ['/live/x.ts'] });
    r = await app.request('GET', '/memfs/live/x.ts');
    t.equal(r.status, 404);
    t.same(r.body.details, ['/live/x.ts']);
  });

  t.test('a chunked upload without Content-Length is stored whole', async (t) => {
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(app.url);
      const req = httpRequest({ host: u.hostname, port: u.port, method: 'PUT', path: '/memfs/chunked.ts', headers: { ...basic(), 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write(Buffer.alloc(1000, 65 + i));
      req.end();
    });
    t.equal(status, 201);
    const r = await rawRequest(app.url, 'GET', '/memfs/chunked.ts');
    t.equal(r.body.length, 10_000);
    t.equal(r.body[0], 65);
    t.equal(r.body[9999], 74);
  });

  t.test('HEAD, ETag and If-None-Match (304), If-Modified-Since (304)', async (t) => {
    await app.request('PUT', '/memfs/c.m3u8', { raw: '#EXTM3U\n', headers: basic() });
    const h = await rawRequest(app.url, 'HEAD', '/memfs/c.m3u8');
    t.equal(h.status, 200);
    t.equal(h.headers['content-length'], '8');
    t.equal(h.body.length, 0);
    const etag = h.headers.etag as string;
    t.match(etag, /^"[^"]+"$/);
    let r = await rawRequest(app.url, 'GET', '/memfs/c.m3u8', { headers: { 'if-none-match': etag } });
    t.equal(r.status, 304);
    t.equal(r.body.length, 0);
    r = await rawRequest(app.url, 'GET', '/memfs/c.m3u8', { headers: { 'if-none-match': `W/${etag}, "other"` } });
    t.equal(r.status, 304, 'weak comparison and lists');
    r = await rawRequest(app.url, 'GET', '/memfs/c.m3u8', { headers: { 'if-modified-since': h.headers['last-modified'] as string } });
    t.equal(r.status, 304);
    r = await rawRequest(app.url, 'GET', '/memfs/c.m3u8', { headers: { 'if-modified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' } });
    t.equal(r.status, 200);
    await app.request('PUT', '/memfs/c.m3u8', { raw: '#EXTM3U\n', headers: basic() });
    r = await rawRequest(app.url, 'GET', '/memfs/c.m3u8', { headers: { 'if-none-match': etag } });
    t.equal(r.status, 200, 'a rewrite changes the ETag even with the same bytes and size');
    t.not(r.headers.etag, etag);
  });

  t.test('byte ranges: 206 for satisfiable, 416 otherwise, ignored when If-Range is stale', async (t) => {
    const body = Buffer.from('0123456789');
    await app.request('PUT', '/memfs/r.mp4', { raw: body, headers: basic() });
    const cases: Array<[string, number, string?, string?]> = [
      ['bytes=0-3', 206, '0123', 'bytes 0-3/10'],
      ['bytes=7-', 206, '789', 'bytes 7-9/10'],
      ['bytes=-2', 206, '89', 'bytes 8-9/10'],
      ['bytes=5-100', 206, '56789', 'bytes 5-9/10'],
      ['bytes=10-', 416],
      ['bytes=-0', 416],
      ['bytes=3-1', 200, '0123456789'],
      ['items=1-2', 200, '0123456789'],
      ['bytes=0-1,4-5', 200, '0123456789'],
    ];
    for (const [range, status, text, cr] of cases) {
      const r = await rawRequest(app.url, 'GET', '/memfs/r.mp4', { headers: { range } });
      t.equal(r.status, status, range);
      if (text !== undefined) t.equal(r.text, text, range);
      if (cr) t.equal(r.headers['content-range'], cr);
      if (status === 416) {
        t.equal(r.headers['content-range'], 'bytes */10');
        t.equal(r.json.code, 416);
      }
    }
    const etag = (await rawRequest(app.url, 'HEAD', '/memfs/r.mp4')).headers.etag as string;
    let r = await rawRequest(app.url, 'GET', '/memfs/r.mp4', { headers: { range: 'bytes=0-1', 'if-range': etag } });
    t.equal(r.status, 206);
    r = await rawRequest(app.url, 'GET', '/memfs/r.mp4', { headers: { range: 'bytes=0-1', 'if-range': '"stale"' } });
    t.equal(r.status, 200);
    t.equal(r.text, '0123456789');
  });

  t.test('gzip for text types of 1000 bytes or more, with its own ETag', async (t) => {
    const playlist = `#EXTM3U\n${'#EXTINF:2.0,\nsegment.ts\n'.repeat(100)}`;
    await app.request('PUT', '/memfs/big.m3u8', { raw: playlist, headers: basic() });
    const r = await rawRequest(app.url, 'GET', '/memfs/big.m3u8', { headers: { 'accept-encoding': 'gzip' } });
    t.equal(r.status, 200);
    t.equal(r.headers['content-encoding'], 'gzip');
    t.match(r.headers.vary, /Accept-Encoding/);
    t.equal(gunzipSync(r.body).toString(), playlist);
    const plain = await rawRequest(app.url, 'GET', '/memfs/big.m3u8');
    t.equal(plain.headers['content-encoding'], undefined);
    t.not(plain.headers.etag, r.headers.etag);
    await app.request('PUT', '/memfs/big.ts', { raw: Buffer.alloc(5000), headers: basic() });
    const seg = await rawRequest(app.url, 'GET', '/memfs/big.ts', { headers: { 'accept-encoding': 'gzip' } });
    t.equal(seg.headers['content-encoding'], undefined, 'video is not compressed');
    // a large text file is compressed as a stream (off the main thread), the same bytes
    const text = 'x,'.repeat(400_000);
    await app.request('PUT', '/memfs/big.txt', { raw: text, headers: basic() });
    for (let i = 0; i < 2; i++) {
      const large = await rawRequest(app.url, 'GET', '/memfs/big.txt', { headers: { 'accept-encoding': 'gzip' } });
      t.equal(large.headers['content-encoding'], 'gzip');
      t.equal(large.headers['content-length'], undefined, 'streamed');
      t.equal(gunzipSync(large.body).toString(), text, 'the same bytes');
    }
    const unsatisfiable = await rawRequest(app.url, 'GET', '/memfs/big.txt', { headers: { range: `bytes=999999999-${' '.repeat(5000)}` } });
    t.equal(unsatisfiable.status, 416);
    t.ok(unsatisfiable.text.length < 400, 'the Range header is not copied whole into the body');
  });

  t.test('the fast path and the full route answer a plain GET with the same headers', async (t) => {
    await app.request('PUT', '/memfs/same.m3u8', { raw: '#EXTM3U\n', headers: basic() });
    const fast = await rawRequest(app.url, 'GET', '/memfs/same.m3u8?session=abc');
    // a failing If-None-Match keeps the answer a 200 but sends it through the fastify route
    const full = await rawRequest(app.url, 'GET', '/memfs/same.m3u8', { headers: { 'if-none-match': '"other"' } });
    t.equal(fast.status, 200);
    t.equal(full.status, 200);
    for (const h of ['content-type', 'content-length', 'etag', 'last-modified', 'accept-ranges', 'vary']) {
      t.equal(fast.headers[h], full.headers[h], h);
    }
    t.equal(fast.text, full.text);
    const encoded = await rawRequest(app.url, 'GET', '/memfs/s%61me.m3u8');
    t.equal(encoded.text, '#EXTM3U\n', 'escaped paths take the full route and are decoded');
  });

  t.test('CORS from storage.cors.origins', async (t) => {
    await app.request('PUT', '/memfs/cors.m3u8', { raw: '#EXTM3U\n', headers: basic() });
    let r = await rawRequest(app.url, 'GET', '/memfs/cors.m3u8', { headers: { origin: 'https://player.example' } });
    t.equal(r.headers['access-control-allow-origin'], 'https://player.example');
    t.equal(r.headers['access-control-allow-credentials'], 'true');
    t.match(r.headers.vary, /Origin/);
    r = await rawRequest(app.url, 'GET', '/memfs/cors.m3u8', { headers: { origin: 'https://a.tv.example' } });
    t.equal(r.headers['access-control-allow-origin'], 'https://a.tv.example', 'wildcard pattern');
    r = await rawRequest(app.url, 'GET', '/memfs/cors.m3u8', { headers: { origin: 'https://evil.example' } });
    t.equal(r.headers['access-control-allow-origin'], undefined);
    r = await rawRequest(app.url, 'OPTIONS', '/memfs/cors.m3u8', { headers: { origin: 'https://player.example', 'access-control-request-method': 'PUT' } });
    t.equal(r.status, 204);
    t.equal(r.headers['access-control-allow-origin'], 'https://player.example');
    t.match(r.headers['access-control-allow-methods'], /PUT/);
    t.equal(r.headers['access-control-max-age'], '86400');
    r = await rawRequest(app.url, 'OPTIONS', '/memfs/cors.m3u8', { headers: { origin: 'https://evil.example' } });
    t.equal(r.status, 204, 'every OPTIONS is 204');
    t.equal(r.headers['access-control-allow-origin'], undefined);
    r = await rawRequest(app.url, 'PUT', '/memfs/cors.m3u8', { headers: { origin: 'https://player.example' }, body: 'x' });
    t.equal(r.status, 401);
    t.equal(r.headers['access-control-allow-origin'], 'https://player.example', 'errors carry CORS headers too');
  });

  t.test('/memfs/* is not shadowed by the disk catch-all, and GET /memfs/ is 404', async (t) => {
    await app.request('PUT', '/api/v3/fs/disk/memfs/shadow.txt', { raw: 'disk' });
    await app.request('PUT', '/memfs/shadow.txt', { raw: 'mem', headers: basic() });
    t.equal((await app.request('GET', '/memfs/shadow.txt')).text, 'mem');
    t.equal((await app.request('GET', '/memfs/')).status, 404);
  });
});
