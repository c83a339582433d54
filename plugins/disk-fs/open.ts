import { lstat, open } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import type { FsFile, FsNode } from '../../sdk/fs.ts';
import { isMissing, type DiskRoot } from './root.ts';

/*
 * Opening a path of the disk root: the one copy of the rules shared by the main thread's
 * filesystem (DiskFilesystem.open) and the serving threads (reader.ts).
 */

/** Inode, size and nanosecond mtime: changes with every rewrite or rename over the file. */
export const etagOf = (st: BigIntStats) => `"${st.ino.toString(16)}-${st.size.toString(16)}-${st.mtimeNs.toString(16)}"`;

/**
 * The entry at `path` (cleaned): a file (open, with a stream over its descriptor), a folder, a
 * link (to its target inside the root), or undefined. Hidden files are missing; a path that
 * resolves out of the root throws the 403 ApiError (DiskRoot.resolve).
 */
export async function openDiskNode(r: DiskRoot, path: string): Promise<FsNode | undefined> {
  if (r.hidden(path)) return undefined;
  const real = await r.resolve(path);
  if (real === undefined) return undefined;
  // the entry may be deleted between realpath and here (ffmpeg's delete_segments): a 404
  const l = await lstat(r.abs(path)).catch((err: unknown) => { if (isMissing(err)) return undefined; throw err; });
  if (!l) return undefined;
  // a link answers 301 to its target; the root may itself be a link (a mounted volume)
  if (l.isSymbolicLink() && path !== '/') return { kind: 'link', target: r.toFsPath(real) };
  let fh;
  try {
    fh = await open(real, 'r');
    // facts from the open descriptor: a rename over the file cannot mix two versions
    const st = await fh.stat({ bigint: true });
    if (st.isDirectory()) {
      await fh.close();
      return { kind: 'dir' };
    }
    if (!st.isFile()) {
      await fh.close();
      return undefined;
    }
    const h = fh;
    const size = Number(st.size);
    const file: FsFile = {
      size,
      mtimeMs: Number(st.mtimeMs),
      etag: etagOf(st),
      stream: (start, end) => h.createReadStream({ start, end, autoClose: true }),
      release: () => { void h.close().catch(() => {}); },
    };
    return { kind: 'file', path, file };
  } catch (err) {
    await fh?.close().catch(() => {});
    if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'EACCES') return undefined;
    throw err;
  }
}
