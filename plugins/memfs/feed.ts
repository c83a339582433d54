import type { FsChange, FsChangeFeed, FsFile } from '../../sdk/index.ts';
import type { MemNode } from './entry.ts';

/**
 * memfs's change feed (`FilesystemService.changes`): every write, delete and purge in the order
 * made, for the copies the core's serving threads keep. With shared memory asked for, bodies are
 * allocated in SharedArrayBuffers (one per file, never copied again), so the copies share them.
 */
export class MemFeed implements FsChangeFeed {
  #seq = 0;
  readonly #listeners = new Set<(c: FsChange) => void>();
  #shared = false;
  readonly #files: () => Iterable<[string, MemNode]>;
  readonly #reshare: () => void;

  /** `files` lists the store; `reshare` moves its bodies to shared memory (when asked for). */
  constructor(files: () => Iterable<[string, MemNode]>, reshare: () => void) {
    this.#files = files;
    this.#reshare = reshare;
  }

  get shared(): boolean {
    return this.#shared;
  }

  snapshot(): { seq: number; files: Array<[string, FsFile]> } {
    const out: Array<[string, FsFile]> = [];
    for (const [path, n] of this.#files()) if (n.kind === 'file') out.push([path, n.file]);
    return { seq: this.#seq, files: out };
  }

  subscribe(fn: (c: FsChange) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  useSharedMemory(on: boolean): void {
    if (on === this.#shared) return;
    this.#shared = on;
    if (on) this.#reshare();
  }

  /** A new version of `path` (a file), or its end (undefined: deleted, purged, or now a link). */
  changed(path: string, file: FsFile | undefined): void {
    if (this.#listeners.size === 0) return;
    const c: FsChange = { seq: ++this.#seq, path, file };
    for (const fn of this.#listeners) fn(c);
  }

  /** A Buffer of `size` bytes: over a SharedArrayBuffer of its own while shared memory is on. */
  readonly alloc = (size: number): Buffer => (this.#shared ? Buffer.from(new SharedArrayBuffer(size)) : Buffer.allocUnsafeSlow(size));

  /** The bytes where they belong now (a copy only when shared memory is on and they are not there). */
  place(data: Buffer): Buffer {
    if (!this.#shared) return data;
    if (data.buffer instanceof SharedArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) return data;
    const out = this.alloc(data.length);
    out.set(data);
    return out;
  }
}
