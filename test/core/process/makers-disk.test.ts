import t from 'tap';
import type { FilesystemService } from '../../../sdk/index.ts';
import { onDisk } from '../../../core/process/makers.ts';

/* A maker's `fs` paths mapped to the local folders of the mounts (makers.ts `onDisk`): the longest mount holding a path decides. */

const fs = (mount: string, root?: string) => ({ mount, root }) as unknown as FilesystemService;
const mounts = [fs('/', '/srv/disk'), fs('/memfs'), fs('/s3'), fs('/rec', '/srv/rec')];

t.test('namespace paths to local folders', async (t) => {
  t.equal(onDisk(mounts, '/alice/'), '/srv/disk/alice/', 'a disk folder keeps its closing /');
  t.equal(onDisk(mounts, '/alice/cam.mp4'), '/srv/disk/alice/cam.mp4', 'a file');
  t.equal(onDisk(mounts, '/'), '/srv/disk/', 'the root');
  t.equal(onDisk(mounts, '/..foo/'), '/srv/disk/..foo/', 'a folder whose name starts with two dots');
  t.equal(onDisk(mounts, '/rec/a/'), '/srv/rec/a/', 'the longest mount wins');
  t.equal(onDisk(mounts, '/memfs/alice/'), undefined, 'a mount with no folder: nothing local');
  t.equal(onDisk(mounts, '/memfsx/'), '/srv/disk/memfsx/', 'a name that only starts like a mount is the disk\'s');
  t.equal(onDisk(mounts, 'alice/'), undefined, 'a relative path: nothing');
  t.equal(onDisk(mounts, '/a/../../etc/'), '/srv/disk/etc/', 'dots resolved within the namespace');
});
