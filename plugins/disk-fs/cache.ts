// the SDK's files one by one, not its index: the cache rules also run in every serving thread
import { fsExtension } from '../../sdk/fs-path.ts';
import type { FsFile } from '../../sdk/fs.ts';

/** A cached file: content in memory, served like any file held in memory. */
export interface CachedNode { kind: 'file'; path: string; file: FsFile }

export interface DiskCacheOptions {
  /** Total bytes; 0 = unlimited. */
  maxBytes: number;
  /** Largest file kept; 0 = unlimited. */
  maxFileBytes: number;
  ttlMs: number;
  /** Extensions with their dot (`.ts`); empty allow = all. Block wins. */
  allow: string[];
  block: string[];
}

interface Entry {
  node: CachedNode;
  /** The file's version (ETag) when it was read, to notice changes made outside the service. */
  version: string;
  expires: number;
}

const dotted = (list: string[]) => list.map((e) => (e.startsWith('.') ? e : `.${e}`).toLowerCase());

/**
 * The disk mount's HTTP cache (`storage.disk.cache`, reference 11.5): an LRU of file contents
 * keyed by request path, bounded in total and per file, entries expiring after the TTL. Writes
 * and deletes through the filesystem evict their entry (and the folder's, for `index.html`).
 */
export class DiskCache {
  readonly #o: DiskCacheOptions;
  readonly #allow: string[];
  readonly #block: string[];
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  #sweptAt = 0;

  constructor(o: DiskCacheOptions) {
    this.#o = o;
    this.#allow = dotted(o.allow);
    this.#block = dotted(o.block);
  }

  get ttlMs(): number {
    return this.#o.ttlMs;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Does the extension rule let this path be cached? */
  allows(path: string): boolean {
    const ext = fsExtension(path);
    if (this.#block.includes(ext)) return false;
    return this.#allow.length === 0 || this.#allow.includes(ext);
  }

  /** Small enough to be kept? */
  fits(size: number): boolean {
    return (this.#o.maxFileBytes <= 0 || size <= this.#o.maxFileBytes) && (this.#o.maxBytes <= 0 || size <= this.#o.maxBytes);
  }

  /** A live entry (bumped to most recently used), or undefined. */
  get(key: string, now = Date.now()): Entry | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    this.#entries.delete(key);
    if (e.expires <= now) {
      this.#bytes -= e.node.file.size;
      return undefined;
    }
    this.#entries.set(key, e);
    return e;
  }

  put(key: string, node: CachedNode, version: string, now = Date.now()): void {
    this.evictKey(key);
    this.#entries.set(key, { node, version, expires: now + this.#o.ttlMs });
    this.#bytes += node.file.size;
    if (now - this.#sweptAt > 10_000) this.#sweep(now);
    // the first entries of the map are the least recently used
    for (const k of this.#entries.keys()) {
      if (this.#o.maxBytes <= 0 || this.#bytes <= this.#o.maxBytes) break;
      this.evictKey(k);
    }
  }

  evictKey(key: string): void {
    const e = this.#entries.get(key);
    if (!e) return;
    this.#entries.delete(key);
    this.#bytes -= e.node.file.size;
  }

  /** Drops what a change of `path` makes stale: its entry, and its folder's when it is the index. */
  evict(path: string): void {
    this.evictKey(path);
    if (path.endsWith('/index.html')) this.evictKey(path.slice(0, -'/index.html'.length) || '/');
  }

  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [k, e] of this.#entries) if (e.expires <= now) this.evictKey(k);
  }
}
