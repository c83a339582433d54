import { createServiceRef } from './refs.ts';

/** One file of a filesystem; `name` is its absolute path inside the filesystem (`/a/b.ts`). */
export interface FsFileInfo {
  name: string;
  size_bytes: number;
  /** Unix seconds, as the API reports it. */
  last_modified: number;
}

/** Result of a write. */
export interface FsWriteResult {
  /** True when the file did not exist before (201), false when it was overwritten (204). */
  created: boolean;
}

/**
 * A named filesystem (disk, mem, or a vendor's). Paths are absolute inside the filesystem and
 * already cleaned by the caller; implementations must still refuse anything outside their root.
 */
export interface FilesystemService {
  /** API name: `disk`, `mem`, ... (`/api/v3/fs/{name}`). */
  readonly name: string;
  /** Kind: `disk`, `mem`, ... */
  readonly type: string;
  /** Public mount point: `/` for disk, `/memfs` for mem. */
  readonly mount: string;
  /** For filesystems backed by a local folder: its absolute path (`{diskfs}`, output validation). */
  readonly root?: string;
  /** Files matching a glob on their absolute path (`*` stays in a folder, `**` crosses). */
  list(glob?: string): Promise<FsFileInfo[]>;
  stat(path: string): Promise<FsFileInfo | undefined>;
  readFile(path: string): Promise<Buffer | undefined>;
  writeFile(path: string, data: Buffer): Promise<FsWriteResult>;
  /** True when something was deleted. */
  deleteFile(path: string): Promise<boolean>;
  /** Bytes used and the limit (0 = unlimited). */
  usage(): { used: number; limit: number };
}

/**
 * Every filesystem of the app (many providers).
 *
 * @example
 * deps: { filesystems: filesystemsRef },
 * setup(ctx) { const mem = ctx.deps.filesystems.find((f) => f.name === 'mem'); }
 */
export const filesystemsRef = createServiceRef<FilesystemService, true>('filesystems', { multiple: true });
