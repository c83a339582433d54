import { statfsSync } from 'node:fs';
import { lstat, open, rename, stat, statfs, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type {
  FilesystemService, FsFileInfo, FsNode, FsOpenHint, FsPublicMount, FsReaderModule, FsWriteOptions, FsWriteResult,
} from '../../sdk/index.ts';
import { GlobMatchers, filesystemEvents, type FilesystemEvents } from '../../sdk/index.ts';
import { diskErrors, MAX_NAME_BYTES, MAX_PATH_BYTES, writeError } from './errors.ts';
import { isMissing, type DiskRoot } from './root.ts';
import { diskUsage, walkFiles } from './walk.ts';
import { etagOf, openDiskNode } from './open.ts';
import { openChecked, pinFolder, type PinnedFolder } from './pin.ts';
import { publicRead } from './public-view.ts';
import type { DiskCache } from './cache.ts';
import type { DiskReaderInit } from './reader.ts';
import { siblingModule } from '../../sdk/module-url.ts';

/** How old the walked total may be for an upload's limit check (ffmpeg writes beside the service). */
const USAGE_MAX_AGE_MS = 2000;
/** How old a figure an upload's check takes without waiting for a walk may be (what ffmpeg wrote since is not in it). */
const USAGE_STALE_MS = 30_000;
/** How old it may be for `usage()`, the metrics' figure asked every sample: a walk every 10 s at most, not every other sample. */
export const METRIC_MAX_AGE_MS = 10_000;
/**
 * How old it may be for `usage()` at most: a figure is walked again after 10 s only while things
 * change, else ever less often up to once a minute (issue 46.2: an idle service walked every 10 s).
 */
export const METRIC_QUIET_MAX_AGE_MS = 60_000;

/**
 * Whether `usage()` walks again (pure, for tests): a figure `ageMs` old; `moved`: the filesystem
 * under the folder changed since its walk began (its free blocks or inodes: any write, create or
 * delete on it, by ffmpeg or anyone); `quietWalks`: walks in a row that found the same figure
 * (each doubles the wait from 10 s, up to a minute; a write through the service counts anew).
 */
export function metricWalkDue(ageMs: number, moved: boolean, quietWalks: number): boolean {
  if (ageMs > METRIC_QUIET_MAX_AGE_MS) return true;
  return moved && ageMs > Math.min(METRIC_QUIET_MAX_AGE_MS, METRIC_MAX_AGE_MS * 2 ** quietWalks);
}

/** Free blocks and inodes of the filesystem under `dir` (NaN when it cannot be read: never equal). */
export function fsMark(dir: string): { blocks: number; inodes: number } {
  try {
    const s = statfsSync(dir);
    return { blocks: s.bfree, inodes: s.ffree };
  } catch {
    return { blocks: NaN, inodes: NaN };
  }
}


/**
 * The disk filesystem `disk`: a folder, served at `/` with `index.html` for folders. Uploads go
 * to a temp file beside the target and are renamed over it, so a failed or aborted upload never
 * replaces the old file. `storage.disk.max_size_mbytes` bounds what is written through it.
 */
export class DiskFilesystem implements FilesystemService {
  readonly name = 'disk';
  /** The legacy name, still used by cleanup patterns and `/api/v3/fs/diskfs`. */
  readonly aliases = ['diskfs'];
  readonly type = 'disk';
  readonly mount = '/';
  readonly defaultFile = 'index.html';
  /** Served read-only at `/` by the core's file door; `/api/...` stays the API's. */
  readonly publicMount: FsPublicMount = { defaultType: 'text/html', reserved: ['api'] };
  /** The HTTP cache of the public mount (`storage.disk.cache`), when on. */
  cache: DiskCache | undefined;

  /** Serving threads open the folder themselves, unless the cache is on (its files are main's). */
  get reader(): FsReaderModule | undefined {
    if (this.cache) return undefined;
    return { url: siblingModule('./reader.ts', import.meta.url), init: { dir: this.#r.dir, real: this.#r.real, reserved: this.#r.reserved } satisfies DiskReaderInit };
  }
  readonly root: string;
  readonly #r: DiskRoot;
  readonly #globs = new GlobMatchers();
  readonly #limit: number;
  readonly #events: FilesystemEvents;
  readonly #changed: Array<(path: string) => void> = [];
  #used = 0;
  /** Files found by the last scan (the metric's figure; not kept exact between scans). */
  #files = 0;
  #usedAt = 0;
  /** The walk under way, if any. */
  #walking: Promise<void> | undefined;
  /** The filesystem's free blocks and inodes when the last walk began (`fsMark`). */
  #mark = { blocks: NaN, inodes: NaN };
  /** When `usage()` last looked whether to walk. */
  #lookedAt = 0;
  /** Walks in a row that found the figure unchanged (`metricWalkDue`). */
  #quietWalks = 0;
  /** Bytes of uploads in flight, so two concurrent uploads cannot both take the last free space. */
  #inflight = 0;

  /** `events` reports refused writes (507) as `fs.full`; a no-op by default. */
  constructor(root: DiskRoot, limit: number, events: FilesystemEvents = filesystemEvents(undefined, 'disk')) {
    this.#r = root;
    this.root = root.dir;
    this.#limit = limit;
    this.#events = events;
  }

  /** Calls `fn` after every write or delete through this service (the HTTP cache evicts). */
  onChange(fn: (path: string) => void): void {
    this.#changed.push(fn);
  }

  usage(): { used: number; limit: number; files: number } {
    const now = Date.now();
    const age = now - this.#usedAt;
    // the filesystem is looked at (statfs) every 10 s at most, as the walk
    if (age > METRIC_MAX_AGE_MS && !this.#walking && now - this.#lookedAt > METRIC_MAX_AGE_MS) {
      this.#lookedAt = now;
      if (metricWalkDue(age, this.#moved(), this.#quietWalks)) void this.#refreshUsage().catch(() => {});
    }
    return { used: this.#used, limit: this.#limit, files: this.#files };
  }

  /** The filesystem's free blocks or inodes changed since the last walk began. */
  #moved(): boolean {
    const now = fsMark(this.root);
    return now.blocks !== this.#mark.blocks || now.inodes !== this.#mark.inodes;
  }

  /** The walked total, at most `USAGE_MAX_AGE_MS` old; one walk at a time (askers meanwhile share it). */
  #refreshUsage(): Promise<number> {
    // ffmpeg writes to the disk directly, so the total is re-read rather than only counted
    if (Date.now() - this.#usedAt <= USAGE_MAX_AGE_MS) return Promise.resolve(this.#used);
    this.#walking ??= (async () => {
      try {
        this.#mark = fsMark(this.root);
        const before = { used: this.#used, files: this.#files };
        ({ used: this.#used, files: this.#files } = await diskUsage(this.#r));
        this.#quietWalks = before.used === this.#used && before.files === this.#files ? this.#quietWalks + 1 : 0;
        this.#usedAt = Date.now();
      } finally {
        this.#walking = undefined;
      }
    })();
    return this.#walking.then(() => this.#used);
  }

  /** `hint.door`: the public mount's view (playlists rewritten, the HTTP cache); else the file as it is. */
  open(path: string, hint?: FsOpenHint): Promise<FsNode | undefined> {
    if (hint?.door) return publicRead(this, this.cache, path, hint.head === true);
    return openDiskNode(this.#r, path);
  }

  /** The current version (ETag) of a file, without opening it; undefined when it is gone. */
  async version(path: string): Promise<string | undefined> {
    const st = await stat(this.#r.abs(path), { bigint: true }).catch(() => undefined);
    return st?.isFile() ? etagOf(st) : undefined;
  }

  async list(glob?: string): Promise<FsFileInfo[]> {
    const match = glob ? this.#globs.get(glob) : undefined;
    const out: FsFileInfo[] = [];
    for await (const f of walkFiles(this.#r)) {
      if (!match || match(f.name)) out.push({ name: f.name, size_bytes: f.size, last_modified: Math.floor(f.mtimeMs / 1000) });
    }
    return out;
  }

  async stat(path: string): Promise<FsFileInfo | undefined> {
    const n = await this.open(path);
    if (n?.kind !== 'file') return undefined;
    n.file.release?.();
    return { name: path, size_bytes: n.file.size, last_modified: Math.floor(n.file.mtimeMs / 1000) };
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    const o = await openChecked(this.#r, path);
    if (!o) return undefined;
    try {
      return await o.fh.readFile();
    } catch {
      return undefined;
    } finally {
      await o.fh.close().catch(() => {});
    }
  }

  async writeFile(path: string, data: Buffer): Promise<FsWriteResult> {
    return this.writeStream(path, [data], { length: data.length });
  }

  async writeStream(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: FsWriteOptions = {}): Promise<FsWriteResult> {
    try {
      const r = await this.#write(path, body, opts);
      this.#events.written();
      return r;
    } catch (err) {
      this.#events.refused(path, err);
      throw err;
    }
  }

  /*
   * The upload's folder is held open from the check to the rename (`pinFolder`): the temp file is
   * created in it exclusively and renamed over the target in it, so no folder swapped for a link
   * meanwhile can take the upload elsewhere.
   */
  async #write(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: FsWriteOptions): Promise<FsWriteResult> {
    if (path === '/') throw diskErrors.notAFile(path);
    if (this.#r.hidden(path)) throw diskErrors.reserved(path);
    if (Buffer.byteLength(this.#r.real) + Buffer.byteLength(path) > MAX_PATH_BYTES || path.split('/').some((n) => Buffer.byteLength(n) > MAX_NAME_BYTES)) {
      throw diskErrors.tooLong(path);
    }
    const { dir, name } = splitPath(path);
    const pin = (create: boolean) => pinFolder(this.#r, dir, path, create).catch((err: unknown) => { throw writeError(err, path); });
    // folders are made only once the upload passed the limits
    let folder = await pin(false);
    let created: boolean;
    try {
      if (folder && this.#r.hidden(folder.child(name))) throw diskErrors.reserved(path);
      const old = folder && await lstat(folder.entry(name)).catch(() => undefined);
      if (old?.isDirectory()) throw diskErrors.notAFile(path);
      const oldSize = old?.isFile() ? old.size : 0;
      created = old === undefined;
      await this.#checkLimit(oldSize, opts.length);
      if (!folder) {
        folder = (await pin(true))!;
        if (this.#r.hidden(folder.child(name))) throw diskErrors.reserved(path);
      }
      if (opts.length !== undefined) await this.#checkFree(folder.self, opts.length);
      const size = await this.#store(folder, name, path, body, oldSize);
      this.#used += size - oldSize;
    } finally {
      await folder?.close();
    }
    this.#emit(path);
    return { created };
  }

  async #checkLimit(oldSize: number, length: number | undefined): Promise<void> {
    const limit = this.#limit;
    if (limit <= 0) return;
    if (length !== undefined && length > limit) throw diskErrors.tooBig();
    // a figure up to 30 s old (its own writes counted since) serves at once, a fresh walk runs beside:
    // an upload waited for the walk of the whole tree (60,000 files: 3-5 s per PUT)
    const known = this.#usedAt > 0 && Date.now() - this.#usedAt <= USAGE_STALE_MS;
    if (known) void this.#refreshUsage().catch(() => {});
    const used = known ? this.#used : await this.#refreshUsage();
    if (length !== undefined && used + this.#inflight - oldSize + length > limit) throw diskErrors.full();
  }

  /** Writes the body to a new temp file in `folder` and renames it over `name` there; the bytes written. */
  async #store(folder: PinnedFolder, name: string, path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, oldSize: number): Promise<number> {
    const limit = this.#limit;
    // a name of its own: the upload's (up to 255 bytes) plus a suffix would pass the kernel's NAME_MAX
    const tmp = folder.entry(`.u.${randomBytes(6).toString('hex')}.upload`);
    let size = 0;
    // exclusive: never through a link of that name
    const fh = await open(tmp, 'wx', 0o644).catch((err: unknown) => { throw writeError(err, path); });
    try {
      for await (const c of body) {
        size += c.length;
        this.#inflight += c.length;
        if (limit > 0 && this.#used + this.#inflight - oldSize > limit) throw size > limit ? diskErrors.tooBig() : diskErrors.full();
        await fh.write(c);
      }
      await fh.datasync();
      await fh.close();
      await rename(tmp, folder.entry(name));
      return size;
    } catch (err) {
      await fh.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      throw writeError(err, path);
    } finally {
      this.#inflight -= size;
    }
  }

  /** Refuses early an upload of known length that the device has no room for. */
  async #checkFree(dir: string, length: number): Promise<void> {
    const st = await statfs(dir).catch(() => undefined);
    if (st && st.bavail * st.bsize < length) throw diskErrors.full();
  }

  async deleteFile(path: string): Promise<boolean> {
    if (path === '/' || this.#r.hidden(path)) return false;
    const { dir, name } = splitPath(path);
    // the folder is held open and checked: a folder swapped for a link cannot lead the delete out
    const folder = await pinFolder(this.#r, dir, path, false);
    if (!folder) return false;
    let size: number;
    try {
      if (this.#r.hidden(folder.child(name))) return false;
      const st = await lstat(folder.entry(name)).catch(() => undefined);
      if (!st || st.isDirectory()) return false;
      try {
        await unlink(folder.entry(name));
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
      size = st.isFile() ? st.size : 0;
    } finally {
      await folder.close();
    }
    this.#used -= size;
    this.#emit(path);
    return true;
  }

  #emit(path: string): void {
    this.#quietWalks = 0;
    for (const fn of this.#changed) fn(path);
  }
}

/** The folder (`/` for the root) and the last name of a cleaned path. */
function splitPath(path: string): { dir: string; name: string } {
  const i = path.lastIndexOf('/');
  return { dir: path.slice(0, i) || '/', name: path.slice(i + 1) };
}
