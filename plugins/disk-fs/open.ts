import { lstat } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';
import type { FsFile, FsNode } from '../../sdk/fs.ts';
import { isMissing, type DiskRoot } from './root.ts';
import { openChecked } from './pin.ts';

/*
 * Opening a path of the disk root: the one copy of the rules shared by the main thread's
 * filesystem (DiskFilesystem.open) and the serving threads (reader.ts).
 */

/** Inode, size and nanosecond mtime: changes with every rewrite or rename over the file. */
export const etagOf = (st: BigIntStats) => `"${st.ino.toString(16)}-${st.size.toString(16)}-${st.mtimeNs.toString(16)}"`;

/**
 * The entry at `path` (cleaned): a file (open, with a stream over its descriptor), a folder, a
 * link (to its target inside the root), or undefined. Hidden files are missing; an entry whose
 * descriptor is outside the root throws the 403 ApiError (openChecked: the check is on what was
 * opened, so no swap of a folder on the way can lead elsewhere).
 */
export async function openDiskNode(r: DiskRoot, path: string): Promise<FsNode | undefined> {
  const o = await openChecked(r, path);
  if (!o) return undefined;
  const { fh, at } = o;
  try {
    // somewhere else than `path` names: a link on the way; the last one answers 301 to its target
    // (a redirect serves no bytes), a linked folder on the way serves (the root may itself be a link)
    if (at !== path && path !== '/') {
      const l = await lstat(r.abs(path)).catch((err: unknown) => { if (isMissing(err)) return undefined; throw err; });
      // deleted meanwhile (ffmpeg's delete_segments): a 404
      if (!l || l.isSymbolicLink()) {
        await fh.close();
        return l && { kind: 'link', target: at };
      }
    }
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
    const file: FsFile = {
      size: Number(st.size),
      mtimeMs: Number(st.mtimeMs),
      etag: etagOf(st),
      stream: (start, end) => fh.createReadStream({ start, end, autoClose: true }),
      release: () => { void fh.close().catch(() => {}); },
    };
    return { kind: 'file', path, file };
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
}
