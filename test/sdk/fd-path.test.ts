import t from 'tap';
import { mkdir, mkdtemp, open, rename, rm, symlink, unlink, writeFile, readFile } from 'node:fs/promises';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { descriptorPath, isBelow, pinnedPath } from '../../sdk/fd-path.ts';

t.test('pinnedPath names entries of the very folder opened, wherever it went', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fd-path-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'a'));
  await mkdir(join(dir, 'elsewhere'));
  const fh = await open(join(dir, 'a'), constants.O_RDONLY | constants.O_DIRECTORY);
  t.teardown(() => fh.close());
  // the folder moves and a link to another takes its name
  await rename(join(dir, 'a'), join(dir, 'moved'));
  await symlink(join(dir, 'elsewhere'), join(dir, 'a'));
  await writeFile(pinnedPath(fh.fd, 'f.txt'), 'pinned');
  t.equal(await readFile(join(dir, 'moved/f.txt'), 'utf8'), 'pinned', 'written in the folder opened');
  t.equal(descriptorPath(fh.fd), join(dir, 'moved'), 'where it is now');
  t.equal(pinnedPath(fh.fd), `/proc/self/fd/${fh.fd}`);
});

t.test('descriptorPath: a removed file without the kernel\'s suffix; undefined for a pipe or a closed descriptor', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fd-path-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'gone.txt'), 'x');
  const fh = await open(join(dir, 'gone.txt'), 'r');
  await unlink(join(dir, 'gone.txt'));
  t.equal(descriptorPath(fh.fd), join(dir, 'gone.txt'));
  const fd = fh.fd;
  await fh.close();
  t.equal(descriptorPath(fd), undefined, 'closed');
  // a listening socket's descriptor has no path
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  const sock = (server as unknown as { _handle: { fd: number } })._handle.fd;
  t.ok(sock > 2, 'the socket\'s descriptor');
  t.equal(descriptorPath(sock), undefined, 'a socket');
});

t.test('isBelow', async (t) => {
  t.ok(isBelow('/srv/disk', '/srv/disk'));
  t.ok(isBelow('/srv/disk', '/srv/disk/a/b.ts'));
  t.notOk(isBelow('/srv/disk', '/srv/disk-old/a.ts'));
  t.notOk(isBelow('/srv/disk', '/srv'));
  t.notOk(isBelow('/srv/disk', undefined));
  t.ok(isBelow('/', '/anything'));
});
