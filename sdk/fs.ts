import type { Readable } from 'node:stream';
import { createServiceRef } from './refs.ts';
import type { MimeTable } from './fs-mime.ts';

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
 * A file ready to be served over HTTP (see `sendFsFile`): its facts and a way to read it.
 * Objects handed out for one version of a file never change, so they may be shared by readers.
 */
export interface FsFile {
  size: number;
  mtimeMs: number;
  /** Strong validator, quoted (`"..."`): differs whenever the content may differ. */
  etag: string;
  /** Content type fixed when the file was written, if the filesystem knows it; else from the path. */
  mime?: string;
  /** `Last-Modified` as an HTTP date, when precomputed. */
  lastModified?: string;
  /** The whole content when held in memory: sent as is, never copied. */
  data?: Buffer;
  /** Bytes `start..end` (inclusive) for files not held in memory. */
  stream?(start: number, end: number): Readable;
  /** Releases what was acquired to read the file when no stream was taken (HEAD, 304, errors). */
  release?(): void;
  /** Memo of the gzip encoding of `data`, filled by the HTTP helper. */
  gzip?: Buffer;
}

/** What a path names: a file (with the path actually read), a link to another path, or a folder. */
export type FsNode =
  | { kind: 'file'; path: string; file: FsFile }
  | { kind: 'link'; target: string }
  | { kind: 'dir' };

/** Options of a streamed write. */
export interface FsWriteOptions {
  /** Declared length (Content-Length), when known: lets a filesystem refuse early. */
  length?: number;
}

/**
 * A named filesystem (disk, mem, or a vendor's). Paths are absolute inside the filesystem and
 * already cleaned by the caller; implementations must still refuse anything outside their root.
 */
export interface FilesystemService {
  /** API name: `disk`, `mem`, ... (`/api/v3/fs/{name}`, listed by `GET /api/v3/fs`). */
  readonly name: string;
  /**
   * Other names that find this filesystem in `/api/v3/fs/{alias}/...` and cleanup patterns
   * (`diskfs` for `disk`, `memfs` for `mem`); never listed by `GET /api/v3/fs`.
   */
  readonly aliases?: readonly string[];
  /** Content types by extension for `/api/v3/fs/{name}/...`; default: `storage.mimetypes_file`. */
  readonly mime?: MimeTable;
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
  /**
   * Bytes used and the limit (0 = unlimited); `files` is the number of files where the
   * filesystem knows it cheaply (the `filesystem_files` metric), possibly as of a recent scan.
   */
  usage(): { used: number; limit: number; files?: number };
  /** File served for a folder (disk: `index.html`); none when unset. */
  readonly defaultFile?: string;
  /**
   * Looks a path up for serving. Synchronous when it can be (memory), so the hot path stays
   * cheap. Without it the HTTP helper falls back to `stat` + `readFile`.
   */
  open?(path: string): FsNode | undefined | Promise<FsNode | undefined>;
  /**
   * Writes a file from a stream of chunks and replaces the old one atomically: a failed or
   * aborted upload leaves the old content. Capacity errors are ApiError 507, thrown as soon as the
   * bytes so far (or `opts.length`) cannot fit, so memory stays bounded: stopping early is safe,
   * the core drains the rest of the body and the refusal reaches the client. Without it the HTTP
   * helper collects the body and calls `writeFile`.
   */
  writeStream?(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts?: FsWriteOptions): Promise<FsWriteResult>;
  /** Creates (or replaces) a link at `path` to the existing file `target` (memfs). */
  link?(path: string, target: string): Promise<FsWriteResult>;
}

/**
 * Every filesystem of the app (many providers): the one registry. The core serves
 * `/api/v3/fs` from it and the process engine finds cleanup targets in it, by name or alias;
 * a vendor plugin that provides a filesystem here gets both without further code. The resolved
 * list is live: providers mounted later appear in it.
 *
 * @example
 * provides: [filesystemsRef],
 * setup(ctx) { ctx.provide(filesystemsRef, { name: 'vfs', aliases: ['vendorfs'], type: 'mem', mount: '/vfs', ... }); }
 * // elsewhere: deps: { filesystems: filesystemsRef } and findFilesystem(ctx.deps.filesystems, 'memfs')
 */
export const filesystemsRef = createServiceRef<FilesystemService, true>('filesystems', { multiple: true });
