import t from 'tap';
import { pathRules, ruleArgs, type DirEntryKind } from '../../../../core/process/confine/policy.ts';

/* The read grants that spell "everything but the secrets" (pure, on a made-up tree). */

const TREE: Record<string, DirEntryKind[]> = {
  '/': [
    { name: 'usr', kind: 'dir' }, { name: 'etc', kind: 'dir' }, { name: 'srv', kind: 'dir' }, { name: 'dev', kind: 'dir' },
    { name: 'proc', kind: 'dir' }, { name: 'lib', kind: 'link' }, { name: 'vmlinuz', kind: 'other' },
  ],
  '/srv': [{ name: 'core', kind: 'dir' }, { name: 'videos', kind: 'dir' }],
  '/srv/core': [
    { name: 'config.json', kind: 'other' }, { name: 'db', kind: 'dir' }, { name: 'disk', kind: 'dir' },
    { name: 'mime.types', kind: 'other' }, { name: 'into-db', kind: 'link' },
  ],
  '/srv/core/db': [{ name: 'db.json', kind: 'other' }],
  '/etc': [{ name: 'hostname', kind: 'other' }, { name: 'ssl', kind: 'dir' }],
  '/etc/ssl': [{ name: 'key.pem', kind: 'other' }, { name: 'certs', kind: 'dir' }],
  '/dev': [
    { name: 'null', kind: 'other' }, { name: 'vda', kind: 'other' }, { name: 'video0', kind: 'other' }, { name: 'snd', kind: 'dir' },
    { name: 'mem', kind: 'other' }, { name: 'dri', kind: 'dir' }, { name: 'shm', kind: 'dir' }, { name: 'urandom', kind: 'other' },
  ],
};
const list = (dir: string) => TREE[dir];

t.test('every entry is readable but the secrets and the folders on the way to them', async (t) => {
  const r = pathRules({ hidden: ['/srv/core/config.json', '/srv/core/db', '/etc/ssl/key.pem'], writable: ['/srv/core/disk', '/tmp/x'] }, list);
  t.same(r.ro.sort(), ['/etc/hostname', '/etc/ssl/certs', '/proc', '/srv/core/disk', '/srv/core/mime.types', '/srv/videos', '/usr', '/vmlinuz'].sort());
  t.notOk(r.ro.some((p) => p.startsWith('/srv/core/db') || p === '/srv/core/config.json' || p === '/etc/ssl/key.pem'), 'no secret');
  t.notOk(r.ro.includes('/srv/core/into-db') || r.ro.includes('/lib'), 'symlinks are never granted: their targets are judged where they are');
  t.notOk(r.ro.some((p) => p === '/dev' || p.startsWith('/dev/')), '/dev is never read as a whole');
  t.same(r.rw, ['/srv/core/disk', '/tmp/x']);
  t.same(r.dev.sort(), ['/dev/dri', '/dev/null', '/dev/snd', '/dev/urandom', '/dev/video0'], 'media devices by name, no disks, no /dev/mem, no shm');
  t.same(r.ls, ['/dev']);
});

t.test('without secrets: every entry of / but /dev; relative and root paths are ignored', async (t) => {
  const r = pathRules({ hidden: ['relative/x', '/'], writable: [] }, list);
  t.same(r.ro.sort(), ['/etc', '/proc', '/srv', '/usr', '/vmlinuz']);
});

t.test('a secret that does not exist yet keeps its folder split', async (t) => {
  const r = pathRules({ hidden: ['/srv/core/new-secret'], writable: [] }, list);
  t.ok(r.ro.includes('/srv/core/db') && r.ro.includes('/srv/core/config.json'), 'the rest of the folder');
  t.notOk(r.ro.includes('/srv/core') || r.ro.includes('/srv'), 'not the folder itself: a later file there stays unreadable');
});

t.test('the wrapper arguments', async (t) => {
  t.same(ruleArgs({ ro: ['/a'], rw: ['/b'], dev: ['/dev/null'], ls: ['/dev'] }), ['--ro', '/a', '--ls', '/dev', '--dev', '/dev/null', '--rw', '/b']);
});
