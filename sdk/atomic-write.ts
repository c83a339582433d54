import { open, rename, mkdir, unlink } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Writes a file atomically: temp file in the same folder, fsync, rename, fsync of the folder.
 * A crash at any instant leaves the old or the new content, never a torn file.
 *
 * @example
 * await writeFileAtomic('./data/db.json', JSON.stringify(data, null, 4));
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  const d = await open(dir, 'r').catch(() => undefined);
  if (d) {
    await d.sync().catch(() => {});
    await d.close();
  }
}
