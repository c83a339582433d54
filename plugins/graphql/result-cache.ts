import type { GraphqlContext } from './api.ts';

/*
 * Answers kept while what they were computed from is unchanged, the GraphQL side of what the
 * REST list does with its cached bytes (core/process/views.ts). A resolver that reads a service
 * records what it read and how to read it again (`track`); a query whose every resolver did so
 * is kept with its serialized answer. The next identical query (same text, variables, operation)
 * reads again and compares by identity: the process engine hands out the very same objects until
 * a process changes, so 1,000 idle processes are neither executed nor serialized a second time,
 * while any change (state, report, metadata, a new process) misses and runs the query afresh.
 * A resolver that does not track (about's uptime, the log, metrics, a vendor's field) makes its
 * query run every time.
 */

/** One read a resolver made: `read()` again and `same()` tell whether the answer still holds. */
export interface Dependency {
  read(): unknown;
  seen: unknown;
  same(a: unknown, b: unknown): boolean;
}

/** Per request: what the resolvers read, and whether one of them could not say. */
export interface CacheTrace {
  deps: Dependency[];
  untracked: boolean;
}

/** The GraphQL context with the cache's part. */
export interface TraceContext extends GraphqlContext {
  trace?: CacheTrace;
}

const identical = (a: unknown, b: unknown) => a === b;

/** Arrays of the same objects in the same order. */
export function sameItems(a: unknown, b: unknown): boolean {
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Reads through `read`, recording it for the cache; returns what it read. */
export function track<T>(ctx: TraceContext, read: () => T, same: (a: unknown, b: unknown) => boolean = identical): T {
  const seen = read();
  ctx.trace?.deps.push({ read, seen, same });
  return seen;
}

/** Marks the answer as one to compute every time (a read that cannot be checked again cheaply). */
export function untrack(ctx: TraceContext): void {
  if (ctx.trace) ctx.trace.untracked = true;
}

interface Entry {
  deps: Dependency[];
  body: string;
  /** What the entry holds: its key and body, and `ENTRY_OVERHEAD`. */
  bytes: number;
}

/** What an entry holds besides its key's and body's text (the map slot, the entry, its reads). */
export const ENTRY_OVERHEAD = 256;
/** A query text (with its variables) longer than this is never kept: it would be mostly key. */
export const MAX_KEY_BYTES = 8 * 1024;
/** Entries kept at most, whatever their size. */
export const MAX_ENTRIES = 10_000;

/**
 * A small LRU of answers, bounded by what they hold (key, body and a fixed overhead each) and by
 * their number: the key is the client's query text and variables (which a query need not
 * declare), so counting the answers alone let a client keep megabytes under a tiny answer.
 */
export class ResultCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  readonly #maxEntries: number;
  #bytes = 0;

  constructor(maxBytes: number, maxEntries = MAX_ENTRIES) {
    this.#maxBytes = maxBytes;
    this.#maxEntries = maxEntries;
  }

  /** Bytes held now (keys, bodies and overhead), for tests. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Entries held now. */
  get size(): number {
    return this.#entries.size;
  }

  /** The kept answer if every read it came from still gives the same. */
  get(key: string): string | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (!e.deps.every((d) => d.same(d.read(), d.seen))) {
      this.#drop(key, e);
      return undefined;
    }
    // most recently used last
    this.#entries.delete(key);
    this.#entries.set(key, e);
    return e.body;
  }

  set(key: string, trace: CacheTrace, body: string): void {
    const bytes = key.length + body.length + ENTRY_OVERHEAD;
    if (trace.untracked || key.length > MAX_KEY_BYTES || bytes > this.#maxBytes) return;
    const old = this.#entries.get(key);
    if (old) this.#drop(key, old);
    this.#entries.set(key, { deps: trace.deps, body, bytes });
    this.#bytes += bytes;
    for (const [k, e] of this.#entries) {
      if (this.#bytes <= this.#maxBytes && this.#entries.size <= this.#maxEntries) break;
      this.#drop(k, e);
    }
  }

  #drop(key: string, e: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= e.bytes;
  }
}
