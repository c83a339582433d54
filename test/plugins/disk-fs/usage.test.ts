import t from 'tap';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskRoot } from '../../../plugins/disk-fs/root.ts';
import {
  DiskFilesystem, METRIC_MAX_AGE_MS, METRIC_QUIET_MAX_AGE_MS, fsMark, metricWalkDue,
} from '../../../plugins/disk-fs/service.ts';
import { waitFor } from '../../helpers/wait.ts';

/*
 * The metrics' figure of the disk filesystem (issue 46.2): walked at most every 10 s while the
 * filesystem under the folder changes and the walks find changes, ever less often (up to once a
 * minute) while they do not or the filesystem's free blocks and inodes stay put.
 */

t.test('when usage() walks again', async (t) => {
  t.notOk(metricWalkDue(METRIC_MAX_AGE_MS, true, 0), 'never before 10 s, even when the filesystem moved');
  t.ok(metricWalkDue(METRIC_MAX_AGE_MS + 1, true, 0), 'after 10 s when it moved and the last walk found a change');
  t.notOk(metricWalkDue(METRIC_MAX_AGE_MS + 1, true, 1), 'one walk found nothing new: 20 s');
  t.ok(metricWalkDue(2 * METRIC_MAX_AGE_MS + 1, true, 1), '... then walked');
  t.notOk(metricWalkDue(40_000, true, 2), 'two: 40 s');
  t.notOk(metricWalkDue(METRIC_QUIET_MAX_AGE_MS, true, 9), 'many: a minute at most');
  t.ok(metricWalkDue(METRIC_QUIET_MAX_AGE_MS + 1, true, 9));
  t.notOk(metricWalkDue(METRIC_QUIET_MAX_AGE_MS, false, 0), 'the filesystem stayed put: not before a minute');
  t.ok(metricWalkDue(METRIC_QUIET_MAX_AGE_MS + 1, false, 0), 'after a minute anyway');
  t.ok(metricWalkDue(Infinity, false, 0), 'never walked');
});

t.test('the mark moves with a new file and with written blocks, whoever writes; unreadable never equals', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-disk-usage-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const same = (a: { blocks: number; inodes: number }, b: typeof a) => a.blocks === b.blocks && a.inodes === b.inodes;
  const before = fsMark(dir);
  t.ok(Number.isFinite(before.blocks) && Number.isFinite(before.inodes), 'read');
  closeSync(openSync(join(dir, 'empty'), 'w'));
  const created = fsMark(dir);
  t.notOk(same(before, created), 'an empty file created beside the service (an inode)');
  const fd = openSync(join(dir, 'data'), 'w');
  writeSync(fd, Buffer.alloc(4 * 1024 * 1024, 1));
  fsyncSync(fd);
  closeSync(fd);
  t.notOk(same(created, fsMark(dir)), '4 MiB written and synced (blocks)');
  const gone = fsMark(join(dir, 'none'));
  t.notOk(same(gone, fsMark(join(dir, 'none'))), 'a folder that cannot be read: always moved');
});

t.test('usage() walks on its first ask, and counts what ffmpeg wrote beside the service', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-disk-usage-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'db'));
  await writeFile(join(dir, 'a.ts'), Buffer.alloc(1000));
  const fs = new DiskFilesystem(await DiskRoot.open(dir, join(dir, 'db')), 0);
  t.same(fs.usage(), { used: 0, limit: 0, files: 0 }, 'nothing walked yet');
  await waitFor(() => fs.usage().files === 1, { what: 'the first walk' });
  t.same(fs.usage(), { used: 1000, limit: 0, files: 1 });
});

t.test('an upload\'s limit check takes a figure up to 30 s old at once and walks beside it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'core-disk-limit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, 'db'));
  const fs = new DiskFilesystem(await DiskRoot.open(dir, join(dir, 'db')), 10_000);
  const put = (name: string, bytes: number) => fs.writeStream(name, [Buffer.alloc(bytes)], { length: bytes }).then(() => 'stored', (err: { status?: number }) => `refused ${err.status}`);
  t.equal(await put('/a.ts', 4000), 'stored', 'the first upload walks (nothing known yet)');
  // what ffmpeg writes beside the service, unknown until the next walk
  await writeFile(join(dir, 'ffmpeg.ts'), Buffer.alloc(5000));
  await new Promise((r) => setTimeout(r, 2100));
  // a walk of a large tree took 3-5 s per upload: the known figure (4,000 of 10,000) answers now
  t.equal(await put('/b.ts', 3000), 'stored', 'answered from the known figure');
  // (it may have listed the folder before or after b.ts was stored: what ffmpeg wrote is in it either way)
  await waitFor(() => fs.usage().used >= 9000 || undefined, { what: 'the walk beside it' });
  t.equal(await put('/c.ts', 3000), 'refused 507', 'the walk found what ffmpeg wrote: 12,000 with this one is over the limit');
});
