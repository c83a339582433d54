import type {
  BasicCredentials, FilesystemService, FsFile, FsFileInfo, FsPublicMount, FsWriteOptions, FsWriteResult, MimeTable,
} from '../../sdk/index.ts';
import { GlobMatchers, filesystemEvents, type FilesystemEvents } from '../../sdk/index.ts';
import { memfsErrors } from './errors.ts';
import { ENTRY_BYTES, chargeOf, fileNode, info, own, type MemNode } from './entry.ts';
import { Inflight } from './inflight.ts';
import { UploadBuffer } from './upload.ts';
import { MemFeed } from './feed.ts';

/**
 * What survives a config reload (`ctx.retain`). The map's order is the order of last writes
 * (a write deletes and re-inserts its key), so the oldest file is always first: purging is a walk
 * from the front, never a sort.
 */
export interface MemStore {
  files: Map<string, MemNode>;
  /** Makes every ETag unique, even for two writes of one size in one millisecond. */
  seq: number;
}

export interface MemfsOptions {
  /** Bytes; 0 = unlimited. */
  limit: number;
  /** Drop the oldest files to make room instead of refusing the write. */
  purge: boolean;
  mime: MimeTable;
  /** Bytes all uploads in progress may hold (default: the limit, or 256 MiB without one). */
  maxInflight?: number;
  /** Reports refused writes (507) and purges as events; a no-op by default. */
  events?: FilesystemEvents;
  /** Public writes at `/memfs` (`storage.memory.auth`). */
  writes?: { basic?: BasicCredentials };
}

/**
 * The memory filesystem. Files are immutable Buffers; a write swaps the map entry in one
 * synchronous step, so a reader gets either the old or the new bytes, never a mix, and readers
 * that hold the old Buffer keep it.
 */
export class MemFilesystem implements FilesystemService {
  readonly name = 'mem';
  /** The legacy name, still used by cleanup patterns and `/api/v3/fs/memfs`. */
  readonly aliases = ['memfs'];
  readonly type = 'mem';
  readonly mount = '/memfs';
  readonly publicMount: FsPublicMount;
  readonly #store: MemStore;
  readonly #globs = new GlobMatchers();
  readonly #files: Map<string, MemNode>;
  readonly #opts: MemfsOptions;
  readonly #inflight: Inflight;
  readonly #events: FilesystemEvents;
  /** Every change, for the serving threads' copies (the core's file door). */
  readonly changes: MemFeed;
  /** What the entries count toward the limit: their bytes, and per entry `ENTRY_BYTES` and its name (entry.ts). */
  #used = 0;

  constructor(store: MemStore, opts: MemfsOptions) {
    this.#store = store;
    this.#files = store.files;
    this.#opts = opts;
    this.publicMount = { defaultType: 'application/data', writes: opts.writes ?? {} };
    this.#events = opts.events ?? filesystemEvents(undefined, 'mem');
    this.changes = new MemFeed(() => this.#files.entries(), () => this.#reshare());
    this.#inflight = new Inflight({
      used: () => this.#used,
      replaced: (path) => chargeOf(path, this.#files.get(path)),
      purge: (need, keep) => this.#purge(need, keep),
    }, { limit: opts.limit, purge: opts.purge, cap: opts.maxInflight });
    // retained files get this app's content types (the mime table may have changed)
    for (const [path, n] of this.#files) {
      if (n.kind === 'file') this.#files.set(path, fileNode(path, { ...n.file, mime: this.#mimeOf(path), gzip: undefined }));
      this.#used += chargeOf(path, n);
    }
  }

  #mimeOf(path: string): string {
    return this.#opts.mime.lookup(path) ?? 'application/data';
  }

  /** Trims to the limit after a reload that lowered it (only with purge: nothing is dropped silently). */
  resize(): number {
    const over = this.#opts.limit > 0 ? this.#used - this.#opts.limit : 0;
    return over > 0 && this.#opts.purge ? this.#purge(over, '') : 0;
  }

  usage(): { used: number; limit: number; files: number } {
    return { used: this.#used, limit: this.#opts.limit, files: this.#files.size };
  }

  /** The node at `path` (synchronous: the door's hot path never waits for memory). */
  open(path: string): MemNode | undefined {
    return this.#files.get(path);
  }

  /** Moves every body to shared memory (the serving threads' copies share them). */
  #reshare(): void {
    for (const [path, n] of this.#files) {
      if (n.kind !== 'file') continue;
      const data = this.changes.place(n.file.data!);
      if (data !== n.file.data) this.#files.set(path, fileNode(path, { ...n.file, data, gzip: undefined }));
    }
  }

  async list(glob?: string): Promise<FsFileInfo[]> {
    const match = glob ? this.#globs.get(glob) : undefined;
    const out: FsFileInfo[] = [];
    for (const [name, n] of this.#files) if (!match || match(name)) out.push(info(name, n));
    return out;
  }

  async stat(path: string): Promise<FsFileInfo | undefined> {
    const n = this.#files.get(path);
    return n && info(path, n);
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    let n = this.#files.get(path);
    if (n?.kind === 'link') n = this.#files.get(n.target);
    return n?.kind === 'file' ? n.file.data : undefined;
  }

  async writeFile(path: string, data: Buffer): Promise<FsWriteResult> {
    try {
      return this.#written(this.#commit(path, own(data, data.length, this.changes.alloc)));
    } catch (err) {
      this.#events.refused(path, err);
      throw err;
    }
  }

  async writeStream(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: FsWriteOptions = {}): Promise<FsWriteResult> {
    try {
      return this.#written(await this.#upload(path, body, opts));
    } catch (err) {
      this.#events.refused(path, err);
      throw err;
    }
  }

  #written(r: FsWriteResult): FsWriteResult {
    this.#events.written();
    return r;
  }

  async #upload(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: FsWriteOptions): Promise<FsWriteResult> {
    const inflight = this.#inflight;
    const alloc = this.changes.alloc;
    let buf = new UploadBuffer(undefined, alloc);
    let reserved = 0;
    inflight.begin(path);
    try {
      // an announced length is reserved up front: refused before any byte is read
      if (opts.length !== undefined && opts.length > 0) {
        inflight.reserve(path, opts.length, opts.length);
        reserved = opts.length;
        buf = new UploadBuffer(opts.length, alloc);
      }
      for await (const c of body) {
        const total = buf.size + c.length;
        if (total > reserved) {
          inflight.reserve(path, total - reserved, total);
          reserved = total;
        }
        buf.push(c);
      }
    } finally {
      inflight.end(path, reserved);
    }
    return this.#commit(path, buf.take());
  }

  async deleteFile(path: string): Promise<boolean> {
    const n = this.#files.get(path);
    if (!n) return false;
    this.#files.delete(path);
    this.#used -= chargeOf(path, n);
    this.changes.changed(path, undefined);
    return true;
  }

  async link(path: string, target: string): Promise<FsWriteResult> {
    if (path === '/' || path === target) throw memfsErrors.linkTarget('a link needs a path of its own');
    if (this.#files.get(target)?.kind !== 'file') throw memfsErrors.linkTarget(`${target} is not a file`);
    const old = this.#files.get(path);
    const node: MemNode = { kind: 'link', target, mtimeMs: Date.now() };
    // a link is an entry too: it needs room, and a purge must not drop its target
    this.#room(chargeOf(path, node) - chargeOf(path, old), path, target);
    this.#files.delete(path);
    this.#files.set(path, node);
    this.#used += chargeOf(path, node) - chargeOf(path, old);
    // the copies hold files only: a link is main's to answer
    this.changes.changed(path, undefined);
    return { created: !old };
  }

  /** Checks the capacity and swaps the entry, all in one synchronous step. */
  #commit(path: string, body: Buffer): FsWriteResult {
    const { limit, purge } = this.#opts;
    const data = this.changes.place(body);
    const old = this.#files.get(path);
    const charge = data.length + ENTRY_BYTES + Buffer.byteLength(path);
    if (limit > 0 && charge > limit) throw memfsErrors.tooBig();
    this.#room(charge - chargeOf(path, old), path);
    const mtimeMs = Date.now();
    const seq = ++this.#store.seq;
    const file: FsFile = {
      size: data.length, mtimeMs, data, mime: this.#mimeOf(path),
      etag: `"${data.length.toString(16)}-${mtimeMs.toString(16)}-${seq.toString(16)}"`,
      lastModified: new Date(mtimeMs).toUTCString(),
    };
    const node = fileNode(path, file);
    this.#files.delete(path);
    this.#files.set(path, node);
    this.#used += charge - chargeOf(path, old);
    this.changes.changed(path, file);
    return { created: old === undefined };
  }

  /**
   * Makes room for `grow` more bytes under the limit (nothing to do without one): uploads in flight
   * have reserved theirs, so a commit does not take it from them. Without purge, 507.
   */
  #room(grow: number, ...keep: string[]): void {
    const limit = this.#opts.limit;
    if (limit <= 0 || grow <= 0) return;
    const need = this.#used + grow + this.#inflight.bytes - limit;
    if (need <= 0) return;
    if (!this.#opts.purge) throw memfsErrors.full();
    this.#purge(need, ...keep);
  }

  /** Drops the oldest files (not `keep`) until `need` is free; returns what they counted toward the limit. */
  #purge(need: number, ...keep: string[]): number {
    let freed = 0;
    let bytes = 0;
    let files = 0;
    for (const [p, n] of this.#files) {
      if (freed >= need) break;
      if (keep.includes(p) || n.kind !== 'file') continue;
      this.#files.delete(p);
      this.changes.changed(p, undefined);
      freed += chargeOf(p, n);
      bytes += n.file.size;
      files++;
    }
    this.#used -= freed;
    this.#events.purged(keep[0] ?? '', files, bytes);
    return freed;
  }
}
