import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFs } from '../memfs/fs-helpers.ts';
import { DiskRoot } from '../../../plugins/disk-fs/root.ts';
import { DiskFilesystem } from '../../../plugins/disk-fs/service.ts';
import { isApiError } from '../../../sdk/errors.ts';

/*
 * The rules the disk filesystem checks on what it opened (door-race.test.ts races them): where a
 * link leads is judged by the descriptor, for reads, uploads, deletes, listings and readFile.
 */

t.test('links to the service\'s own files (db.dir below the root) are never served, written, deleted or listed', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-disk-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'db'), { recursive: true });
  await writeFile(join(dir, 'db/config.json'), '{"secret":1}');
  await symlink(join(dir, 'db'), join(dir, 'cfg'));
  await symlink(join(dir, 'db/config.json'), join(dir, 'c.json'));
  const app = await startFs(t, { db: { dir: join(dir, 'db') }, storage: { disk: { dir, cache: { enable: false } } } });
  const secret = await readFile(join(dir, 'db/config.json'), 'utf8');
  for (const p of ['/cfg/config.json', '/c.json', '/api/v3/fs/disk/cfg/config.json', '/api/v3/fs/disk/c.json']) {
    const r = await app.request('GET', p);
    t.equal(r.status, 404, `GET ${p}`);
    t.notOk(r.text.includes('secret'), 'no content');
  }
  t.equal((await app.request('PUT', '/api/v3/fs/disk/cfg/config.json', { raw: '{"pwned":1}' })).status, 403, 'no upload through a link');
  t.equal((await app.request('PUT', '/api/v3/fs/disk/cfg/sessions/x.txt', { raw: 'x' })).status, 403, 'no reserved folder made through a link');
  t.equal((await app.request('DELETE', '/api/v3/fs/disk/cfg/config.json')).status, 404, 'no delete through a link');
  t.equal(await readFile(join(dir, 'db/config.json'), 'utf8'), secret, 'the config file is unchanged');
  t.notOk((await readdir(join(dir, 'db'))).includes('sessions'), 'nothing made in db.dir');
  const list = await app.request('GET', '/api/v3/fs/disk');
  t.same(list.body.map((f: { name: string }) => f.name).filter((n: string) => n.includes('config')), [], 'the link to the config is not listed');
});

t.test('uploads and deletes through files, missing folders and operator links', async (t) => {
  const app = await startFs(t);
  const disk = join(app.dir, 'disk');
  await writeFile(join(disk, 'file.txt'), 'plain');
  await mkdir(join(disk, 'real/sub'), { recursive: true });
  await symlink(join(disk, 'real'), join(disk, 'linked'));
  let r = await app.request('PUT', '/api/v3/fs/disk/file.txt/x.txt', { raw: 'x' });
  t.equal(r.status, 400, 'a file in the way of the folder');
  t.same(r.body.details, ['/file.txt/x.txt: a file is in the way'], 'no server path in the answer');
  t.equal((await app.request('DELETE', '/api/v3/fs/disk/file.txt/x.txt')).status, 404);
  t.equal((await app.request('DELETE', '/api/v3/fs/disk/none/x.txt')).status, 404);
  r = await app.request('PUT', '/api/v3/fs/disk/linked/sub/new/up.txt', { raw: 'through the link' });
  t.equal(r.status, 201, 'an operator\'s link inside the root takes uploads');
  t.equal(await readFile(join(disk, 'real/sub/new/up.txt'), 'utf8'), 'through the link');
  t.equal((await app.request('DELETE', '/api/v3/fs/disk/linked/sub/new/up.txt')).status, 200);
  t.same(await readdir(join(disk, 'real/sub/new')), [], 'deleted in the linked folder');
});

t.test('listings: links to files inside with their target\'s size, no linked folders, no FIFOs', async (t) => {
  const app = await startFs(t);
  const disk = join(app.dir, 'disk');
  await mkdir(join(disk, 'l/deep'), { recursive: true });
  await writeFile(join(disk, 'l/deep/a.ts'), 'aaaa');
  await symlink(join(disk, 'l/deep/a.ts'), join(disk, 'l/to-a.ts'));
  await symlink(join(disk, 'l/deep'), join(disk, 'l/to-deep'));
  await symlink('/etc/hostname', join(disk, 'l/out.txt'));
  execFileSync('mkfifo', [join(disk, 'l/fifo')]);
  const r = await app.request('GET', '/api/v3/fs/disk?glob=/l/**&sort=name');
  t.same(r.body.map((f: { name: string; size_bytes: number }) => [f.name, f.size_bytes]), [['/l/deep/a.ts', 4], ['/l/to-a.ts', 4]]);
  // a FIFO is opened without blocking, and is no file
  t.equal((await app.request('GET', '/l/fifo')).status, 404, 'GET of a FIFO');
  t.equal((await app.request('GET', '/api/v3/fs/disk/l/fifo')).status, 404, 'API GET of a FIFO');
});

t.test('readFile: the file\'s bytes; undefined for folders, hidden files (through links too) and missing ones; 403 out of the root', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-disk-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const disk = join(dir, 'disk');
  await mkdir(join(disk, 'folder'), { recursive: true });
  await mkdir(join(disk, 'db'), { recursive: true });
  await writeFile(join(disk, 'db/config.json'), '{"secret":1}');
  await symlink(join(disk, 'db/config.json'), join(disk, 'c.json'));
  await writeFile(join(disk, 'a.m3u8'), '#EXTM3U\n');
  await writeFile(join(disk, '.a.m3u8.0123456789ab.upload'), 'half');
  await writeFile(join(dir, 'secret.txt'), 'secret');
  await symlink(join(dir, 'secret.txt'), join(disk, 'out.txt'));
  const fs = new DiskFilesystem(await DiskRoot.open(disk, join(disk, 'db')), 0);
  t.equal((await fs.readFile('/a.m3u8'))?.toString(), '#EXTM3U\n');
  t.equal(await fs.readFile('/folder'), undefined, 'a folder');
  t.equal(await fs.readFile('/.a.m3u8.0123456789ab.upload'), undefined, 'an upload in progress');
  t.equal(await fs.readFile('/none'), undefined, 'missing');
  t.equal(await fs.readFile('/db/config.json'), undefined, 'the service\'s config');
  t.equal(await fs.readFile('/c.json'), undefined, 'the service\'s config through a link');
  const err = await fs.readFile('/out.txt').catch((e: unknown) => e);
  t.ok(isApiError(err) && err.status === 403, 'a link out of the root is the 403');
});
