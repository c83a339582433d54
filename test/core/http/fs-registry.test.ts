import t from 'tap';
import { fileURLToPath } from 'node:url';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, nullProcess } from '../process/helpers.ts';

/*
 * One filesystem registry (issue 8.4): `/api/v3/fs` is served by the core from the filesystems
 * plugins provide, aliases included; a vendor's filesystem is listed, usable and cleaned.
 */

const VENDOR = fileURLToPath(new URL('./fixtures/vendor-plugin.ts', import.meta.url));

t.test('a vendor filesystem is listed and usable through /api/v3/fs, by name and alias', async (t) => {
  const app = await startApp(t, { config: { plugins: ['disk-fs', 'memfs', VENDOR] } });
  const list = await app.request('GET', '/api/v3/fs');
  t.equal(list.status, 200);
  t.same(list.body, [
    { name: 'disk', type: 'disk', mount: '/' },
    { name: 'mem', type: 'mem', mount: '/memfs' },
    { name: 'vfs', type: 'vendor', mount: '/vfs' },
  ], 'names in mount order; aliases are not listed');

  t.equal((await app.request('PUT', '/api/v3/fs/vfs/a/b.txt', { raw: 'hello' })).status, 201);
  const got = await app.request('GET', '/api/v3/fs/vfs/a/b.txt');
  t.equal(got.status, 200);
  t.equal(got.text, 'hello');
  t.equal((await app.request('GET', '/api/v3/fs/vendorfs/a/b.txt')).text, 'hello', 'the provider\'s alias');
  t.same((await app.request('GET', '/api/v3/fs/vfs')).body.map((f: { name: string }) => f.name), ['/a/b.txt']);
  t.equal((await app.request('DELETE', '/api/v3/fs/vfs/a/b.txt')).status, 200);
  t.equal((await app.request('GET', '/api/v3/fs/vfs/a/b.txt')).status, 404);

  t.equal((await app.request('PUT', '/api/v3/fs/memfs/x.txt', { raw: 'm' })).status, 201, 'memfs is the alias of mem');
  t.equal((await app.request('GET', '/api/v3/fs/mem/x.txt')).text, 'm');
  t.equal((await app.request('PUT', '/api/v3/fs/diskfs/y.txt', { raw: 'd' })).status, 201, 'diskfs is the alias of disk');
  t.equal((await app.request('GET', '/api/v3/fs/disk/y.txt')).text, 'd');
  const unknown = await app.request('GET', '/api/v3/fs/nope/x.txt');
  t.equal(unknown.status, 404);
  t.equal(unknown.body.message, 'File not found');
});

t.test('the fs API is the core\'s: it answers with no filesystem plugin loaded', async (t) => {
  const app = await startApp(t, { config: { plugins: [] } });
  t.same((await app.request('GET', '/api/v3/fs')).body, []);
  t.equal((await app.request('GET', '/api/v3/fs/mem/x')).status, 404);
});

t.test('cleanup rules find a vendor filesystem, by name and by alias', async (t) => {
  const app = await startApp(t, { config: { plugins: ['memfs', VENDOR] } });
  for (const n of [1, 2, 3]) await app.request('PUT', `/api/v3/fs/vfs/c_${n}.ts`, { raw: 'x' });
  for (const n of [1, 2, 3]) await app.request('PUT', `/api/v3/fs/vfs/d_${n}.ts`, { raw: 'x' });
  const body = nullProcess('vclean');
  body.output = [{ ...(body.output as object[])[0], cleanup: [
    { pattern: 'vfs:/c_*.ts', max_files: 1 },
    { pattern: 'vendorfs:/d_*.ts', max_files: 2 },
  ] }];
  await addProcess(app, body);
  const names = async () => ((await app.request('GET', '/api/v3/fs/vfs')).body as { name: string }[]).map((f) => f.name);
  const left = await waitFor(async () => {
    const n = await names();
    return n.filter((x) => x.startsWith('/c_')).length === 1 && n.filter((x) => x.startsWith('/d_')).length === 2 ? n : undefined;
  }, { what: 'the rules to trim the vendor filesystem', timeout: 10_000 });
  t.equal(left.length, 3, `kept ${left.join(', ')}`);
});

t.test('{fs:<name>} finds a filesystem through the registry, by name or alias', async (t) => {
  const app = await startApp(t, { config: { plugins: ['disk-fs', 'memfs', VENDOR] } });
  const port = new URL(app.url).port;
  await addProcess(app, nullProcess('fsph', {
    output: [{ id: 'out', address: '-', options: ['-f', 'null', '-metadata', 'a={fs:vfs}/x', '-metadata', 'b={fs:vendorfs}', '-metadata', 'c={fs:nope}'] }],
  }));
  const cmd = (await app.request('GET', '/api/v3/process/fsph/state')).body.command as string[];
  t.ok(cmd.includes(`a=http://127.0.0.1:${port}/vfs/x`), `the vendor mount as a URL (${cmd.join(' ')})`);
  t.ok(cmd.includes(`b=http://127.0.0.1:${port}/vfs`), 'by alias');
  t.ok(cmd.includes('c={fs:nope}'), 'an unknown filesystem stays literal');
});
