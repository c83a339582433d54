import { open, rename, mkdir, unlink, type FileHandle } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Writes a file atomically: temp file in the same folder, fsync, rename, fsync of the folder.
 * A crash at any instant leaves the old or the new content, never a torn file. A list of pieces is
 * written as is (no copy into one buffer), for large documents built from cached parts.
 *
 * @example
 * await writeFileAtomic('./data/db.json', JSON.stringify(data, null, 4));
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array | readonly Uint8Array[], mode = 0o600): Promise<void> {
  const dir = dirname(path);
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'w', mode);
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) await fh.writeFile(data);
    else await writeAll(fh, data);
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

/** Writes every piece in order; writev may stop short, so it goes on from where it stopped. */
async function writeAll(fh: FileHandle, pieces: readonly Uint8Array[]): Promise<void> {
  let rest: readonly Uint8Array[] = pieces;
  while (rest.length) {
    const { bytesWritten } = await fh.writev(rest as Uint8Array[]);
    if (bytesWritten === 0) throw new Error('write made no progress');
    let i = 0;
    let n = bytesWritten;
    while (i < rest.length && n >= rest[i]!.byteLength) n -= rest[i++]!.byteLength;
    if (i === rest.length) return;
    rest = [rest[i]!.subarray(n), ...rest.slice(i + 1)];
  }
}

/**
 * Whether a process with this pid exists (EPERM: it exists but belongs to another user), e.g. to
 * tell a killed writer's temp file, or a crashed service's child, from a live one.
 *
 * @example
 * if (!pidAlive(Number(tmpName.split('.')[2]))) await unlink(tmpName);
 */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
