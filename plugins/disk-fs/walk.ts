import { opendir, stat, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiskRoot } from './root.ts';

/** One file found by a walk. */
export interface WalkEntry {
  /** Path inside the filesystem: `/a/b.ts`. */
  name: string;
  size: number;
  mtimeMs: number;
}

/**
 * Every file below the root, recursively: regular files, and symlinks to files inside the root.
 * Skips uploads in progress, the service's own files, links that point out and linked folders
 * (no loops). Files that vanish during the walk (ffmpeg rotating segments) are skipped.
 */
export async function* walkFiles(root: DiskRoot, dir = root.dir, prefix = ''): AsyncGenerator<WalkEntry> {
  let handle;
  try {
    handle = await opendir(dir);
  } catch {
    return;
  }
  for await (const d of handle) {
    const name = `${prefix}/${d.name}`;
    if (root.hidden(name)) continue;
    const abs = join(dir, d.name);
    if (d.isDirectory()) {
      yield* walkFiles(root, abs, name);
      continue;
    }
    if (!d.isFile() && !d.isSymbolicLink()) continue;
    try {
      if (d.isSymbolicLink() && !root.contains(await realpath(abs))) continue;
      const st = await stat(abs);
      if (st.isFile()) yield { name, size: st.size, mtimeMs: st.mtimeMs };
    } catch {
      // gone or dangling: not a file any more
    }
  }
}

/** Bytes used by all files below the root, and how many files there are. */
export async function diskUsage(root: DiskRoot): Promise<{ used: number; files: number }> {
  let used = 0;
  let files = 0;
  for await (const f of walkFiles(root)) {
    used += f.size;
    files++;
  }
  return { used, files };
}
