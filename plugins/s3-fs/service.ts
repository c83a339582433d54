import { Readable } from 'node:stream';
import type {
  BasicCredentials, FilesystemService, FsFile, FsFileInfo, FsNode, FsOpenHint, FsPublicMount, FsWriteOptions, FsWriteResult, MimeTable,
} from '../../sdk/index.ts';
import { GlobMatchers } from '../../sdk/index.ts';
import { apiErrorOf, TIMEOUTS } from './client.ts';
import { Bucket, globPrefix, type ObjectHead } from './objects.ts';
import { UploadQueue, type BufferBudget, type Outcome, type PendingOp } from './pending.ts';
import { s3Errors } from './errors.ts';
import { UsageScan } from './usage.ts';

/** Bodies up to this size are buffered (and retried); larger ones are streamed as multipart uploads. */
export const SMALL_MAX = 8 * 1024 * 1024;

/**
 * Longest a writer (a PUT, a DELETE, a recording's segment) waits for S3 while it is healthy: S3
 * answering slower than this (hung, not refusing) leaves the write in the upload buffer, answered
 * as done, and the upload goes on (retried if it fails). Then writers do not wait for S3 until a
 * late call is answered (or for one call deadline, `TIMEOUTS.callMs`).
 */
export const WRITE_WAIT_MS = 2_000;
const LATE = Symbol('late');

/** `p`'s value, or `fallback` once `ms` passed (`p` goes on). */
function within<T>(p: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), Math.max(0, ms));
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** What the filesystem reports besides its answers (the plugin logs, emits and counts). */
export interface S3Reports {
  lost(fs: string, path: string, bytes: number, reason: string): void;
  health(fs: string, up: boolean, err?: unknown): void;
}

export interface S3FsOptions {
  name: string;
  mount: string;
  bucket: Bucket;
  budget: BufferBudget;
  mime: MimeTable;
  writes: { basic?: BasicCredentials };
  reports: S3Reports;
}

async function* chain(first: Uint8Array[], rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* first;
  for (;;) {
    const r = await rest.next();
    if (r.done) return;
    yield r.value;
  }
}

function iterate(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncIterator<Uint8Array> {
  if (Symbol.asyncIterator in body) return body[Symbol.asyncIterator]();
  const it = body[Symbol.iterator]();
  return { next: async () => it.next() };
}

/**
 * One `storage.s3` entry as a filesystem: the objects of a bucket by path. Reads go to S3 (a GET
 * streamed; ranges of the version opened); writes are stored in S3 before the answer when S3 is healthy, and kept in
 * the bounded upload buffer and retried when it is not, so writers (ffmpeg's HLS) lose nothing in
 * an outage and readers get the buffered files meanwhile.
 */
export class S3Filesystem implements FilesystemService {
  readonly type = 's3';
  readonly name: string;
  readonly mount: string;
  readonly publicMount: FsPublicMount;
  readonly mime: MimeTable;
  readonly #bucket: Bucket;
  readonly #queue: UploadQueue;
  readonly #globs = new GlobMatchers(1024);
  readonly #reports: S3Reports;
  readonly scan: UsageScan;
  /** Until when writers do not wait for S3 (a call of a writer was late). */
  #slowUntil = 0;

  constructor(o: S3FsOptions) {
    this.name = o.name;
    this.mount = o.mount;
    this.mime = o.mime;
    this.#bucket = o.bucket;
    this.#reports = o.reports;
    this.publicMount = { defaultType: 'application/data', writes: o.writes };
    this.#queue = new UploadQueue(o.budget, {
      store: (path, op) => (op.kind === 'put' ? this.#bucket.put(path, op.data, this.#mimeOf(path)) : this.#bucket.remove(path)),
      lost: (path, op, reason) => o.reports.lost(this.name, path, op.kind === 'put' ? op.data.length : 0, reason),
      health: (up, err) => o.reports.health(this.name, up, err),
    });
    this.scan = new UsageScan(() => this.#bucket.list(''));
  }

  /** Bytes and files not yet in S3. */
  get pending(): { bytes: number; files: number; healthy: boolean } {
    return { bytes: this.#queue.bytes, files: this.#queue.files, healthy: this.#queue.healthy };
  }

  #mimeOf(path: string): string {
    return this.mime.lookup(path) ?? 'application/data';
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw apiErrorOf(this.name, what, err);
    }
  }

  usage(): { used: number; limit: number; files: number } {
    const u = this.scan.current;
    return { used: u.used + this.#queue.bytes, limit: 0, files: u.files + this.#queue.files };
  }

  async list(glob?: string): Promise<FsFileInfo[]> {
    const match = glob ? this.#globs.get(glob) : undefined;
    const found = await this.#call('list', () => this.#bucket.list(globPrefix(glob)));
    const byName = new Map(found.map((f) => [f.name, f]));
    for (const [path, op] of this.#queue.entries()) {
      if (op.kind === 'delete') byName.delete(path);
      else byName.set(path, { name: path, size_bytes: op.data.length, last_modified: Math.floor(op.mtimeMs / 1000) });
    }
    return [...byName.values()].filter((f) => !match || match(f.name));
  }

  async stat(path: string): Promise<FsFileInfo | undefined> {
    const op = this.#queue.get(path);
    if (op) return op.kind === 'put' ? { name: path, size_bytes: op.data.length, last_modified: Math.floor(op.mtimeMs / 1000) } : undefined;
    const h = await this.#call('stat', () => this.#bucket.head(path));
    return h && { name: path, size_bytes: h.size, last_modified: Math.floor(h.mtimeMs / 1000) };
  }

  async readFile(path: string): Promise<Buffer | undefined> {
    const op = this.#queue.get(path);
    if (op) return op.kind === 'put' ? op.data : undefined;
    return this.#call('read', () => this.#bucket.read(path));
  }

  async open(path: string, hint?: FsOpenHint): Promise<FsNode | undefined> {
    const op = this.#queue.get(path);
    if (op) return op.kind === 'put' ? { kind: 'file', path, file: this.#buffered(path, op) } : undefined;
    if (hint?.head) {
      const h = await this.#call('stat', () => this.#bucket.head(path));
      return h && { kind: 'file', path, file: this.#fileOf(path, h) };
    }
    const got = await this.#call('read', () => this.#bucket.get(path));
    if (!got) return undefined;
    const { head: h, body } = got;
    // the GET's own body serves a whole read; a range (or a second read) asks for its bytes of this version
    let held: Readable | undefined = body;
    const drop = () => {
      clearTimeout(guard);
      held?.destroy();
      held = undefined;
    };
    // a reader that neither takes nor releases it (it should) frees the connection after a call's deadline
    const guard = setTimeout(drop, TIMEOUTS.callMs).unref();
    const file = this.#fileOf(path, h, (start, end) => {
      if (held !== undefined && start === 0 && end === h.size - 1) {
        const taken = held;
        held = undefined;
        clearTimeout(guard);
        return taken;
      }
      drop();
      return this.#bucket.range(path, start, end, h.etag);
    });
    file.release = drop;
    return { kind: 'file', path, file };
  }

  #fileOf(path: string, h: ObjectHead, stream?: FsFile['stream']): FsFile {
    return { size: h.size, mtimeMs: h.mtimeMs, etag: h.etag, mime: this.#mimeOf(path), lastModified: new Date(h.mtimeMs).toUTCString(), stream };
  }

  #buffered(path: string, op: PendingOp & { kind: 'put' }): FsFile {
    return {
      size: op.data.length, mtimeMs: op.mtimeMs, etag: op.etag, data: op.data, mime: this.#mimeOf(path),
      lastModified: new Date(op.mtimeMs).toUTCString(),
    };
  }

  /** Writers wait for S3: it is healthy and no call of a writer was late lately. */
  get #prompt(): boolean {
    return this.#queue.healthy && Date.now() >= this.#slowUntil;
  }

  /** `p` until `until`, else `fallback` (and writers stop waiting until a late call is `answered`). */
  async #wait<T>(p: Promise<T>, until: number, fallback: T, answered: (v: T) => boolean): Promise<T> {
    const r = await within<T | typeof LATE>(p, until - Date.now(), LATE);
    if (r !== LATE) return r;
    this.#slowUntil = Date.now() + TIMEOUTS.callMs;
    void p.then((v) => { if (answered(v)) this.#slowUntil = 0; });
    return fallback;
  }

  /** Whether S3 (or the buffer) holds `path` now; undefined while S3 does not answer (or not in time). */
  async #exists(path: string, until: number): Promise<boolean | undefined> {
    const op = this.#queue.get(path);
    if (op) return op.kind === 'put';
    if (!this.#prompt) return undefined;
    const head = this.#bucket.head(path).then((h) => h !== undefined, () => undefined);
    return this.#wait(head, until, undefined, (v) => v !== undefined);
  }

  /** Stores the op of `path` now when S3 is healthy; the writer waits for it when S3 is prompt. */
  async #flush(path: string, until: number): Promise<Outcome> {
    if (!this.#queue.healthy) return 'queued';
    const p = this.#queue.flush(path);
    return this.#prompt ? this.#wait(p, until, 'queued', (v) => v === 'stored') : 'queued';
  }

  async writeFile(path: string, data: Buffer): Promise<FsWriteResult> {
    const until = Date.now() + WRITE_WAIT_MS;
    const existed = await this.#exists(path, until);
    const mtimeMs = Date.now();
    const op = this.#queue.put(path, data, mtimeMs, `"b-${data.length.toString(16)}-${mtimeMs.toString(16)}"`);
    if (!op) {
      this.#reports.lost(this.name, path, data.length, 'the upload buffer is full');
      throw s3Errors.bufferFull(this.name);
    }
    this.scan.changed();
    // the writer waits until S3 has it while S3 is prompt (at most WRITE_WAIT_MS); else it stays
    // buffered and the upload (or the retries) store it
    if (await this.#flush(path, until) === 'lost') throw s3Errors.denied(this.name, `S3 refused ${path}`);
    return { created: existed !== true };
  }

  async writeStream(path: string, body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, opts: FsWriteOptions = {}): Promise<FsWriteResult> {
    const it = iterate(body);
    if (opts.length !== undefined && opts.length > SMALL_MAX) return this.#streamed(path, chain([], it));
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      chunks.push(r.value);
      size += r.value.length;
      if (size > SMALL_MAX) return this.#streamed(path, chain(chunks, it));
    }
    return this.writeFile(path, Buffer.concat(chunks, size));
  }

  /** A large body straight to S3 (multipart): not buffered, so not retried; a failure is 503 and reported. */
  async #streamed(path: string, source: AsyncGenerator<Uint8Array>): Promise<FsWriteResult> {
    const existed = await this.#exists(path, Date.now() + WRITE_WAIT_MS);
    const body = Readable.from(source, { objectMode: false });
    try {
      await this.#bucket.putStream(path, body, this.#mimeOf(path));
    } catch (err) {
      body.destroy();
      const e = apiErrorOf(this.name, 'upload', err);
      this.#reports.lost(this.name, path, 0, e.errorCode ?? 'upload failed');
      throw s3Errors.uploadFailed(this.name, e.details.join('; '));
    }
    this.scan.changed();
    return { created: existed !== true };
  }

  async deleteFile(path: string): Promise<boolean> {
    const until = Date.now() + WRITE_WAIT_MS;
    const existed = await this.#exists(path, until);
    this.#queue.delete(path);
    this.scan.changed();
    await this.#flush(path, until);
    // while S3 does not answer a delete is queued: it answers as done
    return existed ?? true;
  }

  /** Stores what it can within `ms`; the rest is reported lost. */
  async close(ms: number): Promise<void> {
    this.scan.stop();
    await this.#queue.close(ms);
  }
}
