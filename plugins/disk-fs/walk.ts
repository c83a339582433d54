import { lstat, open, opendir, type FileHandle } from 'node:fs/promises';
import { pinnedPath } from '../../sdk/fd-path.ts';
import type { DiskRoot } from './root.ts';
import { FOLDER, OWN_FOLDER, READ } from './pin.ts';

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
 * (no loops). Files that vanish during the walk (ffmpeg rotating segments) are skipped. Each
 * folder is held open while it is listed and its entries are named through it (`pinnedPath`),
 * so a folder swapped for a link meanwhile lists nothing of elsewhere.
 */
export async function* walkFiles(root: DiskRoot): AsyncGenerator<WalkEntry> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(root.dir, FOLDER);
    root.placeOf(fh.fd, '/');
  } catch {
    await fh?.close().catch(() => {});
    return;
  }
  yield* walkFolder(root, fh, '');
}

/** The files below the folder open as `fh` (`prefix` inside the filesystem); closes `fh`. */
async function* walkFolder(root: DiskRoot, fh: FileHandle, prefix: string): AsyncGenerator<WalkEntry> {
  try {
    const handle = await opendir(pinnedPath(fh.fd)).catch(() => undefined);
    if (!handle) return;
    for await (const d of handle) {
      const name = `${prefix}/${d.name}`;
      if (root.hidden(name)) continue;
      const entry = pinnedPath(fh.fd, d.name);
      if (d.isDirectory()) {
        const sub = await folderAt(root, entry, name);
        if (sub) yield* walkFolder(root, sub, name);
        continue;
      }
      const file = d.isFile() ? await lstat(entry).catch(() => undefined) : d.isSymbolicLink() ? await linkedFile(root, entry, name) : undefined;
      if (file?.isFile()) yield { name, size: file.size, mtimeMs: file.mtimeMs };
    }
  } finally {
    await fh.close().catch(() => {});
  }
}

/** The folder `entry` itself (never a link), checked to be where `name` says. */
async function folderAt(root: DiskRoot, entry: string, name: string): Promise<FileHandle | undefined> {
  const fh = await open(entry, OWN_FOLDER).catch(() => undefined);
  if (!fh) return undefined;
  try {
    if (root.placeOf(fh.fd, name) === name) return fh;
  } catch {
    // outside the root
  }
  await fh.close().catch(() => {});
  return undefined;
}

/** The facts of the file a link leads to, when it is inside the root and not hidden. */
async function linkedFile(root: DiskRoot, entry: string, name: string) {
  const fh = await open(entry, READ).catch(() => undefined);
  if (!fh) return undefined;
  try {
    const at = root.placeOf(fh.fd, name);
    return root.hidden(at) ? undefined : await fh.stat();
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => {});
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
