import t from 'tap';
import { startFs } from './fs-helpers.ts';

t.test('the /api/v3/fs/mem API', async (t) => {
  const app = await startFs(t);

  t.test('GET /api/v3/fs names both filesystems', async (t) => {
    const r = await app.request('GET', '/api/v3/fs');
    t.equal(r.status, 200);
    t.same([...r.body].sort((a: any, b: any) => a.name.localeCompare(b.name)), [
      { name: 'disk', type: 'disk', mount: '/' },
      { name: 'mem', type: 'mem', mount: '/memfs' },
    ]);
  });

  t.test('PUT creates (201) then overwrites (204), with Content-Location', async (t) => {
    let r = await app.request('PUT', '/api/v3/fs/mem/live/a.m3u8', { raw: '#EXTM3U\n', headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 201);
    t.equal(r.text, '');
    t.match(r.headers.get('content-type'), /^text\/plain/);
    t.equal(r.headers.get('content-location'), '/api/v3/fs/mem/live/a.m3u8');
    r = await app.request('PUT', '/api/v3/fs/mem/live/a.m3u8', { raw: '#EXTM3U\n#EXT-X-VERSION:3\n' });
    t.equal(r.status, 204);
    t.equal(r.headers.get('content-location'), '/api/v3/fs/mem/live/a.m3u8');
    r = await app.request('GET', '/api/v3/fs/mem/live/a.m3u8');
    t.equal(r.status, 200);
    t.equal(r.text, '#EXTM3U\n#EXT-X-VERSION:3\n');
    t.equal(r.headers.get('content-type'), 'application/vnd.apple.mpegurl');
    t.ok(r.headers.get('etag'));
    t.ok(r.headers.get('last-modified'));
  });

  t.test('a body with any content type, even a malformed one, is stored raw', async (t) => {
    const r = await app.request('PUT', '/api/v3/fs/mem/raw.json', { raw: '{not json', headers: { 'content-type': 'no/such/type;;' } });
    t.equal(r.status, 201);
    const g = await app.request('GET', '/api/v3/fs/mem/raw.json');
    t.equal(g.text, '{not json');
    t.equal(g.headers.get('content-type'), 'application/json');
  });

  t.test('unknown extensions get application/data; HEAD has the length and no body', async (t) => {
    await app.request('PUT', '/api/v3/fs/mem/blob.bin', { raw: Buffer.alloc(1234, 7) });
    const r = await app.request('HEAD', '/api/v3/fs/mem/blob.bin');
    t.equal(r.status, 200);
    t.equal(r.headers.get('content-type'), 'application/data');
    t.equal(r.headers.get('content-length'), '1234');
    t.equal(r.text, '');
  });

  t.test('GET of a missing file is 404 File not found with the path', async (t) => {
    const r = await app.request('GET', '/api/v3/fs/mem/nope.ts');
    t.equal(r.status, 404);
    t.same(r.body, { code: 404, message: 'File not found', details: ['/nope.ts'] });
    const h = await app.request('HEAD', '/api/v3/fs/mem/nope.ts');
    t.equal(h.status, 404);
  });

  t.test('unknown filesystem is 404 for list, get, put and delete', async (t) => {
    for (const [m, p] of [['GET', '/api/v3/fs/nofs'], ['GET', '/api/v3/fs/nofs/a'], ['PUT', '/api/v3/fs/nofs/a'], ['DELETE', '/api/v3/fs/nofs/a']] as const) {
      const r = await app.request(m, p, m === 'PUT' ? { raw: 'x' } : {});
      t.equal(r.status, 404, `${m} ${p}`);
      t.same(r.body.details, ['unknown filesystem: nofs']);
    }
  });

  t.test('DELETE: 200 Deleted, then 404', async (t) => {
    await app.request('PUT', '/api/v3/fs/mem/del.ts', { raw: 'x' });
    let r = await app.request('DELETE', '/api/v3/fs/mem/del.ts');
    t.equal(r.status, 200);
    t.equal(r.text, 'Deleted: /del.ts');
    t.match(r.headers.get('content-type'), /^text\/plain/);
    r = await app.request('DELETE', '/api/v3/fs/mem/del.ts');
    t.equal(r.status, 404);
    t.same(r.body, { code: 404, message: 'File not found', details: ['/del.ts'] });
  });

  t.test('PUT on the root is 400', async (t) => {
    const r = await app.request('PUT', '/api/v3/fs/mem/', { raw: 'x' });
    t.equal(r.status, 400);
    t.equal(r.body.code, 400);
  });

  t.test('listing: glob, sort and order', async (t) => {
    const app2 = await startFs(t);
    for (const [name, size] of [['/s/b.ts', 3], ['/s/a.ts', 1], ['/s/c.ts', 2], ['/s/sub/d.ts', 4], ['/x.m3u8', 5]] as const) {
      await app2.request('PUT', `/api/v3/fs/mem${name}`, { raw: 'x'.repeat(size) });
    }
    let r = await app2.request('GET', '/api/v3/fs/mem');
    t.equal(r.status, 200);
    t.equal(r.body.length, 5);
    t.match(r.body[0], { name: String, size_bytes: Number, last_modified: Number });
    r = await app2.request('GET', '/api/v3/fs/mem?glob=/s/*.ts&sort=name');
    t.same(r.body.map((f: any) => f.name), ['/s/a.ts', '/s/b.ts', '/s/c.ts'], '* stays in a folder');
    r = await app2.request('GET', '/api/v3/fs/mem?glob=/s/**&sort=name&order=desc');
    t.same(r.body.map((f: any) => f.name), ['/s/sub/d.ts', '/s/c.ts', '/s/b.ts', '/s/a.ts'], '** crosses folders');
    r = await app2.request('GET', '/api/v3/fs/mem?sort=size');
    t.same(r.body.map((f: any) => f.size_bytes), [1, 2, 3, 4, 5]);
    r = await app2.request('GET', '/api/v3/fs/mem?sort=size&order=desc');
    t.same(r.body.map((f: any) => f.size_bytes), [5, 4, 3, 2, 1]);
    r = await app2.request('GET', '/api/v3/fs/mem?sort=lastmod&order=desc');
    t.equal(r.body.length, 5);
    r = await app2.request('GET', '/api/v3/fs/mem?glob=/nothing*');
    t.same(r.body, []);
    r = await app2.request('GET', '/api/v3/fs/mem?glob=[');
    t.equal(r.status, 200, 'an invalid glob lists nothing rather than failing');
  });

  t.test('PATCH creates links (201), 400 for missing targets and links to links', async (t) => {
    await app.request('PUT', '/api/v3/fs/mem/t/target.ts', { raw: 'segment' });
    let r = await app.request('PATCH', '/api/v3/fs/mem/t/link.ts', { raw: '/t/target.ts' });
    t.equal(r.status, 201);
    t.equal(r.headers.get('content-location'), '/api/v3/fs/mem/t/link.ts');
    r = await app.request('PATCH', '/api/v3/fs/mem/t/link2.ts', { raw: `${app.url}/memfs/t/target.ts` });
    t.equal(r.status, 201, 'a URL names its path; the /memfs mount is dropped');

    for (const p of ['/t/link.ts', '/t/link2.ts']) {
      const g = await fetch(`${app.url}/api/v3/fs/mem${p}`, { redirect: 'manual' });
      t.equal(g.status, 301);
      t.equal(g.headers.get('location'), '/api/v3/fs/mem/t/target.ts');
      const pub = await fetch(`${app.url}/memfs${p}`, { redirect: 'manual' });
      t.equal(pub.status, 301);
      t.equal(pub.headers.get('location'), '/memfs/t/target.ts');
      const followed = await fetch(`${app.url}/memfs${p}`);
      t.equal(await followed.text(), 'segment');
    }

    r = await app.request('PATCH', '/api/v3/fs/mem/t/bad.ts', { raw: '/t/missing.ts' });
    t.equal(r.status, 400);
    t.equal(r.body.message, 'Failed to create symlink');
    r = await app.request('PATCH', '/api/v3/fs/mem/t/bad.ts', { raw: '/t/link.ts' });
    t.equal(r.status, 400, 'a link to a link is refused');
    r = await app.request('PATCH', '/api/v3/fs/mem/t/bad.ts', { raw: '' });
    t.equal(r.status, 400);
    r = await app.request('PATCH', '/api/v3/fs/mem/t/bad.ts', { raw: '/t/../etc/passwd' });
    t.equal(r.status, 400);

    r = await app.request('GET', '/api/v3/fs/mem?glob=/t/*&sort=name');
    t.same(r.body.map((f: any) => f.name), ['/t/link.ts', '/t/link2.ts', '/t/target.ts']);
    r = await app.request('DELETE', '/api/v3/fs/mem/t/link.ts');
    t.equal(r.status, 200, 'a link is deleted like a file');
    r = await app.request('GET', '/api/v3/fs/mem/t/target.ts');
    t.equal(r.text, 'segment', 'deleting a link keeps its target');
  });

  t.test('PATCH does not exist on disk', async (t) => {
    const r = await app.request('PATCH', '/api/v3/fs/disk/x', { raw: '/y' });
    t.equal(r.status, 404);
  });
});
