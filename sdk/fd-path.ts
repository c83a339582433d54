import { readlinkSync } from 'node:fs';
import { sep } from 'node:path';

/*
 * Paths checked on the descriptor that was opened, not on a path looked at before: Node has no
 * openat(2), but Linux resolves a name below `/proc/self/fd/<fd>` in the very folder `fd` holds
 * open, and tells where an open file is now (readlink of `/proc/self/fd/<fd>`). Whoever can
 * rename inside a served folder (a child writing it) cannot redirect either to another place.
 */

const FD = '/proc/self/fd/';
const DELETED = ' (deleted)';

/**
 * The path that names `name` inside the folder open as `fd` (a descriptor of this process), or
 * the descriptor itself without `name`: the kernel looks `name` up in that folder wherever it is
 * now, as openat(2), renameat(2) and unlinkat(2) would, so a folder swapped for a link after it
 * was opened changes nothing. `name` is one component (no slash); a final link is followed by
 * what follows links (`open` without `O_NOFOLLOW`), never by `lstat`, `rename`, `unlink`, `mkdir`
 * or an exclusive create.
 *
 * @example
 * const dir = await open('/srv/disk/live', constants.O_RDONLY | constants.O_DIRECTORY);
 * await rename(pinnedPath(dir.fd, '.seg.tmp'), pinnedPath(dir.fd, 'seg.ts'));
 * await dir.close();
 */
export function pinnedPath(fd: number, name?: string): string {
  return name === undefined ? FD + fd : `${FD}${fd}/${name}`;
}

/**
 * Where the file or folder open as `fd` is now: its absolute path without links, as the kernel
 * tells (`/proc/self/fd/<fd>`), without the ` (deleted)` it adds for an entry removed since.
 * Undefined when it has no such path (a pipe, a socket, a place outside this process's root, no
 * `/proc`): check it with `isBelow`, which refuses undefined.
 *
 * @example
 * const fh = await open(join(root, path), 'r');
 * if (!isBelow(root, descriptorPath(fh.fd))) await fh.close(); // it led outside
 */
export function descriptorPath(fd: number): string | undefined {
  let p: string;
  try {
    p = readlinkSync(FD + fd);
  } catch {
    return undefined;
  }
  if (p.endsWith(DELETED)) p = p.slice(0, -DELETED.length);
  return p.charCodeAt(0) === 47 /* / */ ? p : undefined;
}

/**
 * Is the absolute, link-free `path` the folder `root` (link-free too) or below it? False for
 * undefined (`descriptorPath` could not tell).
 *
 * @example
 * isBelow('/srv/disk', '/srv/disk/live/a.ts'); // true
 * isBelow('/srv/disk', '/srv/disk-old/a.ts');  // false
 */
export function isBelow(root: string, path: string | undefined): boolean {
  if (path === undefined) return false;
  return path === root || root === sep || (path.startsWith(root) && path.charCodeAt(root.length) === 47 /* / */);
}
