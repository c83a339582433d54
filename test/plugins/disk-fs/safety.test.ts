import t from 'tap';
import { readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFs, rawRequest, basic } from '../memfs/fs-helpers.ts';

/**
 * Escape attempts: each must be refused with a 4xx, never reach outside a filesystem's root and
 * never crash the server. The disk root is `<dir>/disk`; `<dir>/config.json` beside it holds the
 * config (with the memfs password), a prime target.
 */
const ESCAPES: Array<[string, string]> = [
  ['dot-dot', '/../config.json'],
  ['deep dot-dot', '/a/b/../../../config.json'],
  ['encoded dot-dot', '/%2e%2e/config.json'],
  ['upper-case encoded dot-dot', '/%2E%2E/%2E%2E/config.json'],
  ['encoded slash before dot-dot', '/a%2F..%2F..%2Fconfig.json'],
  ['slash then encoded dot-dot', '/a/%2F../../config.json'],
  ['half-encoded dot-dot', '/.%2e/config.json'],
  ['absolute path', '//etc/passwd'],
  ['encoded absolute path', '/%2Fetc%2Fpasswd'],
  ['NUL byte', '/index.html%00.txt'],
  ['NUL byte alone', '/%00'],
  ['bad escape', '/%zz'],
  ['backslashes', '/..\\..\\config.json'],
];

const BASES = ['', '/memfs', '/api/v3/fs/disk', '/api/v3/fs/mem'];

t.test('escape attempts are refused with 4xx on every route and method', async (t) => {
  const app = await startFs(t);
  const config = await readFile(app.configPath, 'utf8');
  await writeFile(join(app.dir, 'disk/index.html'), 'home');
  for (const base of BASES) {
    for (const [what, path] of ESCAPES) {
      const url = `${base}${path}`;
      const g = await rawRequest(app.url, 'GET', url);
      t.ok(g.status >= 400 && g.status < 500, `GET ${url} (${what}) -> ${g.status}`);
      t.notOk(g.text.includes('root:x:') || g.text.includes(`"password"`), `GET ${url} leaks nothing`);
      if (base === '') continue; // the disk mount has no public writes
      const p = await rawRequest(app.url, 'PUT', url.replace('config.json', 'escaped.txt'), { headers: basic(), body: 'pwned' });
      t.ok(p.status >= 400 && p.status < 500, `PUT ${url} (${what}) -> ${p.status}`);
      const d = await rawRequest(app.url, 'DELETE', url, { headers: basic() });
      t.ok(d.status >= 400 && d.status < 500, `DELETE ${url} (${what}) -> ${d.status}`);
    }
  }
  t.equal(await readFile(app.configPath, 'utf8'), config, 'the config file is untouched');
  t.notOk((await readdir(app.dir)).includes('escaped.txt'), 'nothing was written beside the root');
  const r = await rawRequest(app.url, 'GET', '/%2e%2e/config.json');
  t.equal(r.status, 400);
  t.same(r.json, { code: 400, message: 'Bad Request', details: ['path must not contain ..'] });
  t.equal((await app.request('GET', '/ping')).text, 'pong', 'the server is still up');
});

t.test('symlinks inside the disk root that point out are refused', async (t) => {
  const app = await startFs(t);
  const disk = join(app.dir, 'disk');
  await symlink('/etc', join(disk, 'etc'));
  await symlink('/etc/passwd', join(disk, 'pw'));
  await symlink(app.dir, join(disk, 'up'));
  await symlink('/nonexistent/dir', join(disk, 'dangling'));
  for (const path of ['/etc/passwd', '/etc', '/pw', '/up/config.json']) {
    for (const base of ['', '/api/v3/fs/disk']) {
      const r = await rawRequest(app.url, 'GET', `${base}${path}`);
      t.equal(r.status, 403, `GET ${base}${path}`);
      t.notOk(r.text.includes('root:'), 'no content');
      const h = await rawRequest(app.url, 'HEAD', `${base}${path}`);
      t.equal(h.status, 403, `HEAD ${base}${path}`);
    }
  }
  for (const path of ['/etc/escaped.txt', '/up/escaped.txt', '/dangling/escaped.txt']) {
    const r = await rawRequest(app.url, 'PUT', `/api/v3/fs/disk${path}`, { body: 'pwned' });
    t.equal(r.status, 403, `PUT ${path}`);
  }
  t.notOk((await readdir(app.dir)).includes('escaped.txt'), 'nothing written through a link');
  const d = await rawRequest(app.url, 'DELETE', '/api/v3/fs/disk/up/config.json');
  t.equal(d.status, 403, 'no delete through a linked folder');
  await readFile(app.configPath);
  const list = await app.request('GET', '/api/v3/fs/disk');
  t.same(list.body, [], 'links pointing out are not listed');
  const del = await rawRequest(app.url, 'DELETE', '/api/v3/fs/disk/pw');
  t.equal(del.status, 200, 'deleting the link itself removes the link, not its target');
  await readFile('/etc/passwd');
});

t.test('an upload too deep for the kernel to name is refused before any folder is made', async (t) => {
  const app = await startFs(t);
  const deep = `/api/v3/fs/disk/${'ab/'.repeat(1500)}x.txt`;
  const r = await rawRequest(app.url, 'PUT', deep, { body: 'x' });
  t.equal(r.status, 400, r.text.slice(0, 200));
  t.match(r.json, { code: 400, details: [/the path is too long/] });
  t.notOk((await readdir(join(app.dir, 'disk'))).includes('ab'), 'no folder was left behind (2,039 were)');
  const ok = await rawRequest(app.url, 'PUT', `/api/v3/fs/disk/${'ab/'.repeat(100)}x.txt`, { body: 'x' });
  t.equal(ok.status, 201, 'a deep path within the bound is written');
  // a name over NAME_MAX anywhere on the way: refused before a folder is made (x1/y1 were left)
  for (const p of [`x1/y1/${'n'.repeat(256)}`, `x2/y2/${'d'.repeat(300)}/f`, `x3/${'é'.repeat(130)}/f`]) {
    const r = await rawRequest(app.url, 'PUT', `/api/v3/fs/disk/${encodeURI(p)}`, { body: 'x' });
    t.equal(r.status, 400, `${p.slice(0, 12)}...: ${r.text.slice(0, 120)}`);
  }
  const left = await readdir(join(app.dir, 'disk'));
  t.notOk(left.some((n) => /^x\d$/.test(n)), `no folder left (${left.join(' ')})`);
  const longest = `${'n'.repeat(251)}.txt`;
  t.equal((await rawRequest(app.url, 'PUT', `/api/v3/fs/disk/${longest}`, { body: 'x' })).status, 201, 'a name of 255 bytes is written (its upload\'s temporary name is short)');
});
