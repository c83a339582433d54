import { open, realpath } from 'node:fs/promises';
import { join, relative, isAbsolute, sep } from 'node:path';
import { descriptorPath, isBelow } from '../../sdk/fd-path.ts';
import { diskErrors } from './errors.ts';

/** Names of uploads in progress (`.<name>.<hex>.upload`), never served or listed. */
export const UPLOAD_TEMP = /^\..+\.[0-9a-f]{12}\.upload$/;

// a name too long for the kernel cannot exist either: 404, not a 500 with the absolute path
const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR', 'ENAMETOOLONG'].includes(errorCode(err));

/** The errno code of a failed call (`ENOENT`), or ''. */
export const errorCode = (err: unknown): string => (err as NodeJS.ErrnoException | undefined)?.code ?? '';

/**
 * The disk root and the rules that keep every operation inside it: paths come in cleaned (no
 * `..`); what an open reached is checked on its descriptor (`placeOf`), so a link that points out
 * of the root is refused, however the folders on the way change meanwhile.
 */
export class DiskRoot {
  /** The root as configured, absolute. */
  readonly dir: string;
  /** The root with its own symlinks resolved: what real paths are compared with. */
  readonly real: string;
  /** Paths inside the root that hold the service's own files (config, db) when `db.dir` is below it. */
  readonly #reserved: string[];

  constructor(dir: string, real: string, reserved: string[]) {
    this.dir = dir;
    this.real = real;
    this.#reserved = reserved;
  }

  static async open(dir: string, dbDir: string): Promise<DiskRoot> {
    const real = await realpath(dir);
    // every path is checked on its descriptor: without /proc nothing could be served
    const fh = await open(real, 'r');
    const seen = descriptorPath(fh.fd);
    await fh.close();
    if (seen !== real) throw new Error(`/proc/self/fd does not tell where ${dir} is (is /proc mounted?): the disk filesystem checks every path there`);
    const db = await realpath(dbDir).catch(() => dbDir);
    const rel = relative(real, db);
    const reserved = rel.startsWith('..') || isAbsolute(rel)
      ? []
      : ['config.json', 'db.json', 'sessions', 'plugins', 'cert'].map((n) => `/${join(rel, n).split(sep).join('/')}`);
    return new DiskRoot(dir, real, reserved);
  }

  /** The reserved paths (to build the same root in a serving thread). */
  get reserved(): readonly string[] {
    return this.#reserved;
  }

  /** The path inside the filesystem (`/a/b`) of a real path inside the root. */
  toFsPath(real: string): string {
    return `/${relative(this.real, real).split(sep).join('/')}`;
  }

  /** Is `path` (cleaned) one of the service's own files, or an upload in progress? */
  hidden(path: string): boolean {
    if (UPLOAD_TEMP.test(path.slice(path.lastIndexOf('/') + 1))) return true;
    return this.#reserved.some((r) => path === r || path.startsWith(`${r}/`));
  }

  /** Absolute path (not resolved) of a cleaned filesystem path. */
  abs(path: string): string {
    return join(this.dir, path);
  }

  /**
   * Where the entry open as `fd` (opened for `path`) is: its path inside the filesystem, checked
   * on the descriptor itself (`/proc/self/fd`), so a folder swapped for a link between a check
   * and the open cannot lead elsewhere. The 403 when it is outside the root (or the kernel cannot
   * tell where it is). `path` itself when the entry is where `path` names it (no link on the
   * way): the common case, without building a path.
   */
  placeOf(fd: number, path: string): string {
    const real = descriptorPath(fd);
    if (real === undefined || !isBelow(this.real, real)) throw diskErrors.outside(path);
    if (real.length === this.real.length + path.length && real.startsWith(this.real) && real.endsWith(path)) return path;
    return this.toFsPath(real);
  }
}

export { isMissing };
