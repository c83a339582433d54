import t from 'tap';
import { connect } from 'node:net';
import { basic, startFs, rawRequest } from './fs-helpers.ts';
import { waitFor } from '../../helpers/wait.ts';

const MiB = 1024 * 1024;

t.test('memfs capacity without purge: 507 and nothing left behind', async (t) => {
  const app = await startFs(t, { storage: { memory: { max_size_mbytes: 1, purge: false } } });

  let r = await app.request('PUT', '/api/v3/fs/mem/huge.ts', { raw: Buffer.alloc(MiB + 1) });
  t.equal(r.status, 507);
  t.same(r.body, { code: 507, message: 'Insufficient Storage', details: ['File is too big'] });
  t.equal((await app.request('GET', '/api/v3/fs/mem/huge.ts')).status, 404, 'nothing left behind');

  r = await app.request('PUT', '/memfs/a.ts', { raw: Buffer.alloc(600 * 1024, 1), headers: basic() });
  t.equal(r.status, 201);
  r = await app.request('PUT', '/memfs/b.ts', { raw: Buffer.alloc(600 * 1024, 2), headers: basic() });
  t.equal(r.status, 507, 'the public route answers 507 too');
  t.same(r.body.details, ['not enough space on device']);
  t.equal((await app.request('GET', '/memfs/b.ts')).status, 404);

  r = await app.request('PUT', '/memfs/a.ts', { raw: Buffer.alloc(900 * 1024, 3), headers: basic() });
  t.equal(r.status, 204, 'replacing a file counts its old size as free');
  r = await app.request('PUT', '/memfs/a.ts', { raw: Buffer.alloc(MiB + 10, 4), headers: basic() });
  t.equal(r.status, 507);
  const g = await rawRequest(app.url, 'GET', '/memfs/a.ts');
  t.equal(g.body.length, 900 * 1024, 'a refused overwrite leaves the old file');
  t.equal(g.body[0], 3);

  // a chunked upload (no Content-Length) that grows past the limit is refused while it streams
  const status = await chunkedPut(app.url, '/memfs/a.ts', 8, 200 * 1024);
  t.equal(status, 507);
  t.equal((await rawRequest(app.url, 'GET', '/memfs/a.ts')).body[0], 3);
});

t.test('memfs with purge drops the oldest files to make room', async (t) => {
  const app = await startFs(t, { storage: { memory: { max_size_mbytes: 1, purge: true } } });
  for (const n of ['1', '2', '3']) {
    const r = await app.request('PUT', `/api/v3/fs/mem/${n}.ts`, { raw: Buffer.alloc(300 * 1024) });
    t.equal(r.status, 201);
  }
  let r = await app.request('PUT', '/api/v3/fs/mem/4.ts', { raw: Buffer.alloc(300 * 1024) });
  t.equal(r.status, 201);
  r = await app.request('GET', '/api/v3/fs/mem?sort=name');
  t.same(r.body.map((f: any) => f.name), ['/2.ts', '/3.ts', '/4.ts'], 'the oldest file was dropped');
  await app.request('PUT', '/api/v3/fs/mem/2.ts', { raw: Buffer.alloc(300 * 1024) });
  r = await app.request('PUT', '/api/v3/fs/mem/5.ts', { raw: Buffer.alloc(300 * 1024) });
  t.equal(r.status, 201);
  r = await app.request('GET', '/api/v3/fs/mem?sort=name');
  t.same(r.body.map((f: any) => f.name), ['/2.ts', '/4.ts', '/5.ts'], 'a rewrite makes a file young again');
  r = await app.request('PUT', '/api/v3/fs/mem/big.ts', { raw: Buffer.alloc(MiB + 1) });
  t.equal(r.status, 507, 'a file larger than the whole filesystem is still refused');
  t.equal((await app.request('GET', '/api/v3/fs/mem')).body.length, 3, 'and purges nothing');
});

t.test('an aborted upload never replaces the old file', async (t) => {
  const app = await startFs(t);
  await app.request('PUT', '/memfs/keep.ts', { raw: 'old content', headers: basic() });
  const u = new URL(app.url);
  const sock = connect(Number(u.port), u.hostname);
  await new Promise((resolve) => sock.once('connect', resolve));
  const auth = basic().authorization;
  sock.write(`PUT /memfs/keep.ts HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Length: 100000\r\n\r\n`);
  // half a body reaches the socket, then the client goes away
  await new Promise((r) => sock.write(Buffer.alloc(50_000, 120), r));
  sock.destroy();
  await waitFor(async () => (await app.request('GET', '/api/v3/fs/mem')).status === 200, { what: 'server alive' });
  const r = await app.request('GET', '/memfs/keep.ts');
  t.equal(r.text, 'old content');
  t.equal((await app.request('GET', '/api/v3/fs/mem')).body.length, 1);
});

function chunkedPut(base: string, path: string, chunks: number, size: number): Promise<number> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => {
      sock.write(`PUT ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic().authorization}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      for (let i = 0; i < chunks; i++) sock.write(`${size.toString(16)}\r\n${'z'.repeat(size)}\r\n`);
      sock.write('0\r\n\r\n');
    });
    let head = '';
    sock.on('data', (d) => {
      head += d.toString();
      const m = /^HTTP\/1\.1 (\d+)/.exec(head);
      if (m) {
        resolve(Number(m[1]));
        sock.destroy();
      }
    });
    sock.on('error', reject);
  });
}
