import { realpath, lstat } from 'node:fs/promises';
import { dirname, join, relative, isAbsolute, sep } from 'node:path';
import { diskErrors } from './errors.ts';

/** Names of uploads in progress (`.<name>.<hex>.upload`), never served or listed. */
export const UPLOAD_TEMP = /^\..+\.[0-9a-f]{12}\.upload$/;

// a name too long for the kernel cannot exist either: 404, not a 500 with the absolute path
const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR', 'ENAMETOOLONG'].includes((err as NodeJS.ErrnoException).code ?? '');

/**
 * The disk root and the rules that keep every operation inside it: paths come in cleaned (no
 * `..`), and symlinks are resolved here, so a link that points out of the root is refused.
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

  /** Is this real (symlink-free) absolute path inside the root? */
  contains(real: string): boolean {
    return real === this.real || this.real === sep || real.startsWith(this.real + sep);
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
   * The real path of an existing entry, refused (403) when it resolves outside the root;
   * undefined when it does not exist.
   */
  async resolve(path: string): Promise<string | undefined> {
    let real: string;
    try {
      real = await realpath(this.abs(path));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    if (!this.contains(real)) throw diskErrors.outside(path);
    return real;
  }

  /**
   * Checks, before anything is created, that the deepest existing folder on the way to `path`
   * is inside the root (a symlinked folder pointing out would otherwise receive the upload).
   */
  async checkParents(path: string): Promise<void> {
    let dir = dirname(this.abs(path));
    for (;;) {
      try {
        const real = await realpath(dir);
        if (!this.contains(real)) throw diskErrors.outside(path);
        return;
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
      // a dangling symlink must not be created through either
      const st = await lstat(dir).catch(() => undefined);
      if (st?.isSymbolicLink()) throw diskErrors.outside(path);
      const up = dirname(dir);
      if (up === dir) throw diskErrors.outside(path);
      dir = up;
    }
  }
}

export { isMissing };
