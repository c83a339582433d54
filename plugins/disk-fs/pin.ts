import { constants } from 'node:fs';
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises';
import { pinnedPath } from '../../sdk/fd-path.ts';
import { diskErrors, writeError } from './errors.ts';
import { errorCode, isMissing, type DiskRoot } from './root.ts';

/*
 * Every open, create, rename and delete under the disk root, resolved beneath it without a
 * window: what an open reached is checked on the descriptor it got (DiskRoot.placeOf), and a
 * write or delete names its entry through the folder it holds open (`pinnedPath`, like
 * openat/renameat/unlinkat), never through a path checked before. Runs on main and in every
 * serving thread (reader.ts).
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;
/** Reads: links followed (the descriptor is checked after), a FIFO never blocks the open. */
export const READ = O_RDONLY | O_NONBLOCK;
/** A folder, following a link an operator made (checked after). */
export const FOLDER = O_RDONLY | O_DIRECTORY;
/** A folder that must be the entry itself: a link there (dangling, or swapped in) fails to open. */
export const OWN_FOLDER = FOLDER | O_NOFOLLOW;

// an entry a read cannot open is missing: gone, a link loop, a socket, no permission
const UNOPENABLE = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP', 'ENXIO', 'EACCES']);

/** An entry opened for a read, and where it is (its path inside the filesystem). */
export interface Opened {
  fh: FileHandle;
  at: string;
}

/**
 * Opens `path` (cleaned) for reading and checks where the descriptor is: undefined when it
 * cannot be opened or is hidden there (reserved, an upload in progress), the 403 when it is
 * outside the root.
 */
export async function openChecked(r: DiskRoot, path: string): Promise<Opened | undefined> {
  if (r.hidden(path)) return undefined;
  let fh: FileHandle;
  try {
    fh = await open(r.abs(path), READ);
  } catch (err) {
    if (UNOPENABLE.has(errorCode(err))) return undefined;
    throw err;
  }
  let at: string;
  try {
    at = r.placeOf(fh.fd, path);
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
  if (at !== path && r.hidden(at)) {
    await fh.close().catch(() => {});
    return undefined;
  }
  return { fh, at };
}

/** A folder of the root held open: its entries are named through it (`entry`). */
export interface PinnedFolder {
  /** Its path inside the filesystem (`/` for the root). */
  readonly at: string;
  /** The path that names the folder itself (for `statfs`). */
  readonly self: string;
  /** The path that names `name` in this very folder. */
  entry(name: string): string;
  /** The path of `name` inside the filesystem. */
  child(name: string): string;
  close(): Promise<void>;
}

const childPath = (at: string, name: string) => (at === '/' ? `/${name}` : `${at}/${name}`);

function pinned(fh: FileHandle, at: string): PinnedFolder {
  return {
    at,
    self: pinnedPath(fh.fd),
    entry: (name) => pinnedPath(fh.fd, name),
    child: (name) => childPath(at, name),
    close: () => fh.close().catch(() => {}),
  };
}

/**
 * Opens the folder `dir` (cleaned) of the root one component at a time, each through the one
 * before, checking each on its descriptor: inside the root (else the 403 for `path`) and not
 * reserved. Links an operator made inside the root are followed. With `create`, missing folders
 * are made on the way, and a name that is a link there then (dangling, or swapped in) is the 403.
 * Undefined when a folder on the way is missing (or a file) and `create` is off.
 */
export async function pinFolder(r: DiskRoot, dir: string, path: string, create: boolean): Promise<PinnedFolder | undefined> {
  let fh = await open(r.dir, FOLDER);
  try {
    let at = r.placeOf(fh.fd, path);
    for (const name of dir.split('/')) {
      if (name === '') continue;
      // nothing is made in a reserved place
      if (r.hidden(childPath(at, name))) throw diskErrors.reserved(path);
      const next = await step(fh, name, path, create);
      await fh.close();
      if (!next) return undefined;
      fh = next;
      at = r.placeOf(fh.fd, path);
      if (r.hidden(at)) throw diskErrors.reserved(path);
    }
    return pinned(fh, at);
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
}

/** The folder `name` inside `parent`, made when missing and `create` is on. */
async function step(parent: FileHandle, name: string, path: string, create: boolean): Promise<FileHandle | undefined> {
  const entry = pinnedPath(parent.fd, name);
  try {
    return await open(entry, FOLDER);
  } catch (err) {
    if (!create && (isMissing(err) || errorCode(err) === 'ELOOP')) return undefined;
    if (errorCode(err) !== 'ENOENT') throw create ? writeError(err, path) : err;
  }
  await mkdir(entry).catch((err: unknown) => { if (errorCode(err) !== 'EEXIST') throw writeError(err, path); });
  try {
    return await open(entry, OWN_FOLDER);
  } catch (err) {
    // a link there (O_NOFOLLOW with O_DIRECTORY says ENOTDIR for a link, ELOOP elsewhere)
    const link = await lstat(entry).then((st) => st.isSymbolicLink(), () => false);
    throw link || errorCode(err) === 'ELOOP' ? diskErrors.outside(path) : writeError(err, path);
  }
}
