import type { Readable } from 'node:stream';
import { createServiceRef } from './refs.ts';
import type { MimeTable } from './fs-mime.ts';
import type { BasicCredentials } from './credentials.ts';

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
 * A file ready to be served over HTTP (by the core's file door): its facts and a way to read it.
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
  /** Response headers of this answer besides the file's own, as a flat list (a cache's `x-cache`, `cache-control`). */
  headers?: readonly string[];
}

/** What a path names: a file (with the path actually read), a link to another path, or a folder. */
export type FsNode =
  | { kind: 'file'; path: string; file: FsFile }
  | { kind: 'link'; target: string }
  | { kind: 'dir' }
  /** Nothing there, with response headers for the 404 (a cache's `x-cache: SKIP NOTOK`). */
  | { kind: 'none'; headers: readonly string[] };

/** What the file door tells `open` about the read. */
export interface FsOpenHint {
  /** A HEAD request: no body will be read. */
  head?: boolean;
  /** Asked by the file door for the public mount (a filesystem may serve a view there: rewritten playlists, a cache). */
  door?: boolean;
  /** For a mount that `asks`: the request's raw query string without `?` (LL-HLS's `_HLS_msn`). */
  query?: string;
  /** For a mount that `asks`: the client's address as the door resolved it (normalized, no port). */
  remote?: string;
}

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
  open?(path: string, hint?: FsOpenHint): FsNode | undefined | Promise<FsNode | undefined>;
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
  /**
   * How the core's file door serves the public mount; without it the filesystem is reachable
   * only through `/api/v3/fs/{name}`.
   */
  readonly publicMount?: FsPublicMount;
  /**
   * For stores the serving threads can copy (memory): every file and each change, in order. A
   * thread then answers reads from its copy; a read it cannot answer (a miss, a link) goes to main.
   */
  readonly changes?: FsChangeFeed;
  /**
   * For stores another thread can open in place (a local folder): a module that builds a reader
   * there. Used when `changes` is absent; a store with neither is served by main alone.
   */
  readonly reader?: FsReaderModule;
  /** A message of a serving thread's view of the mount (`FsPublicMount.view`, `FsViewContext.send`). */
  fromView?(message: unknown): void;
}

/** How the file door serves a filesystem at its `mount`. */
export interface FsPublicMount {
  /** Content type for extensions the MIME table does not know (`application/data`; the disk mount `text/html`). */
  defaultType: string;
  /**
   * Public PUT/POST/DELETE: absent = read-only; `{}` = open; `basic` = behind these credentials
   * (checked with the auth plugin's backoff; without an auth plugin every write is refused).
   */
  writes?: { basic?: BasicCredentials };
  /**
   * First path segments the door leaves to the router (a catch-all mount: `api`); the first
   * segments of other routes are left to them too.
   */
  reserved?: readonly string[];
  /** Answer CORS preflights (`OPTIONS`) below the mount (default true). */
  preflight?: boolean;
  /**
   * `open` serves a view by request: the door gives it the query and the client in its hint
   * (`FsOpenHint.query`, `remote`). Such a view is main's alone: the serving threads answer only
   * the files of the store's `changes` feed (when it has one) and pass the rest to main, unless
   * the mount has a `view`.
   */
  asks?: boolean;
  /**
   * A module whose default export (`FsViewFactory`, `sdk/fs-view.ts`) answers the mount's reads
   * in every serving thread, for a store with a `changes` feed: the thread's door asks it first
   * for every path of the mount (it decides what of the copy is public), and it answers, holds or
   * passes a request to main from the thread's copy of the feed. It talks to the store on main
   * with `send` (`FilesystemService.fromView`). `init` is structured-cloneable.
   */
  view?: { url: string; init?: unknown };
}

/** One change of a copied store, stamped with an increasing sequence. */
export interface FsChange {
  seq: number;
  path: string;
  /** The new version; undefined when the path was deleted (or became something the copy does not hold). */
  file: FsFile | undefined;
}

/** The changes of a store, for the serving threads' copies. */
export interface FsChangeFeed {
  /** Every file now and the sequence this state has. */
  snapshot(): { seq: number; files: Array<[string, FsFile]> };
  /** Calls `fn` with each later change, in order, synchronously as it is made; returns what unsubscribes. */
  subscribe(fn: (change: FsChange) => void): () => void;
  /**
   * Asks the store to keep file bodies (`data`) in SharedArrayBuffers from now on, so the threads
   * share them without a copy (called while threads run; a body elsewhere is copied once).
   */
  useSharedMemory?(on: boolean): void;
}

/** A module whose default export (`FsReaderFactory`) opens the store from any thread. */
export interface FsReaderModule {
  url: string;
  /** Structured-cloneable. */
  init: unknown;
}

/** Reads of a store from another thread: what `open` answers on main, for files. */
export interface FsReader {
  /** The file at `path` (cleaned), or undefined (a miss, a folder, a link: main answers those). */
  open(path: string): Promise<FsNode | undefined>;
}

/** The default export of an `FsReaderModule`. */
export type FsReaderFactory = (init: unknown) => FsReader;

/**
 * Every filesystem of the app (many providers): the one registry. The core serves
 * `/api/v3/fs` from it and the process engine finds cleanup targets in it, by name or alias;
 * a vendor plugin that provides a filesystem here gets both without further code. The resolved
 * list is live: providers mounted later appear in it.
 *
 * @example
 * provides: [filesystemsRef],
 * setup(ctx) { ctx.provide(filesystemsRef, { name: 'vfs', aliases: ['vendorfs'], type: 'mem', mount: '/vfs', ... }); }
 * // elsewhere: deps: { filesystems: filesystemsRef } and findFilesystem(ctx.deps.filesystems, 'vfs')
 */
export const filesystemsRef = createServiceRef<FilesystemService, true>('filesystems', { multiple: true });
