import t from 'tap';
import { connect } from 'node:net';
import { basic, startFs, startFsKit } from './fs-helpers.ts';

t.test('Expect: 100-continue: a refused upload is answered before its body is sent', async (t) => {
  const app = await startFs(t);
  const u = new URL(app.url);
  const exchange = (auth: string) => new Promise<string>((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => {
      sock.write(`PUT /memfs/e.ts HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 5\r\nExpect: 100-continue\r\n\r\n`);
    });
    let got = '';
    sock.on('data', (d) => {
      got += d.toString();
      // like ffmpeg: send the body only once the server said to go on
      if (got.startsWith('HTTP/1.1 100')) {
        if (!got.includes('body-sent')) sock.write('hello');
        got += 'body-sent';
      }
      if (/HTTP\/1\.1 [2-5]\d\d/.test(got)) {
        sock.destroy();
        resolve(got);
      }
    });
    sock.on('error', reject);
  });
  const refused = await exchange('');
  t.match(refused, /^HTTP\/1\.1 401/, 'the 401 comes instead of 100 Continue');
  const ok = await exchange(`Authorization: ${basic().authorization}\r\n`);
  t.match(ok, /^HTTP\/1\.1 100 Continue[\s\S]*HTTP\/1\.1 201/);
  t.equal((await app.request('GET', '/memfs/e.ts')).text, 'hello');
});

t.test('api.read_only refuses API writes but not public /memfs writes', async (t) => {
  const app = await startFsKit(t, { api: { read_only: true } });
  const api = await app.request('PUT', '/api/v3/fs/mem/ro.ts', { raw: 'x' });
  t.ok(api.status >= 400 && api.status < 500, `API PUT -> ${api.status}`);
  t.equal((await app.request('PUT', '/memfs/ro.ts', { raw: 'x', headers: basic() })).status, 201);
  t.equal((await app.request('GET', '/api/v3/fs/mem/ro.ts')).text, 'x', 'API reads work');
});

t.test('memfs auth disabled: public writes need no credentials', async (t) => {
  const app = await startFsKit(t, { storage: { memory: { auth: { enable: false } } } });
  t.equal((await app.request('PUT', '/memfs/open.ts', { raw: 'x' })).status, 201);
  t.equal((await app.request('DELETE', '/memfs/open.ts')).status, 200);
});

t.test('memfs auth enabled without an auth plugin: writes refused with 401, reads work', async (t) => {
  const app = await startFsKit(t, { plugins: ['disk-fs', 'memfs'] });
  let r = await app.request('PUT', '/memfs/x.ts', { raw: 'x', headers: basic() });
  t.equal(r.status, 401);
  t.same(r.body.details, ['basic auth for /memfs needs the auth plugin']);
  r = await app.request('PUT', '/api/v3/fs/mem/x.ts', { raw: 'x' });
  t.equal(r.status, 201, 'the API is not behind basic auth');
  t.equal((await app.request('GET', '/memfs/x.ts')).text, 'x');
});
