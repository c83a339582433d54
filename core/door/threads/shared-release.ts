import { v8Gc } from '../../runtime/v8-gc.ts';

/*
 * Shared bodies a serving thread let go of, given back (issue 29). A thread's copy of a store holds
 * each file's body as a view on the SharedArrayBuffer main allocated (one backing store for main
 * and every thread, never copied); the bytes are freed once the last isolate that received the
 * buffer collected its handle. V8 does not count a received shared buffer in the thread's memory,
 * and a thread allocates little of its own, so nothing made an idle thread collect: every replaced
 * or deleted segment stayed resident (hundreds of MiB per thread after a live stream). This keeps
 * count of the bytes dropped and, past a bound, runs a full collection of the thread's isolate.
 * `gc` comes from core/runtime/v8-gc.ts.
 */

/** Dropped bytes that make the thread collect at once (the most dead bodies a busy thread holds). */
export const RELEASE_NOW_BYTES = 16 * 1024 * 1024;
/** Dropped bytes that make the thread collect after a quiet moment (a trickle of segments). */
export const RELEASE_LATER_BYTES = 1024 * 1024;
const LATER_MS = 5_000;

/** Runs a full collection of this isolate now (false when V8 refused to expose `gc`). */
export function collectNow(): boolean {
  const gc = v8Gc();
  if (!gc) return false;
  gc();
  return true;
}

/** The bytes of bodies a thread dropped since its last collection, and the collection they call for. */
export class SharedRelease {
  #dropped = 0;
  #soon = false;
  #later: NodeJS.Timeout | undefined;
  /** Collections run (for tests). */
  collections = 0;
  readonly #collect: () => boolean;

  constructor(collect: () => boolean = collectNow) {
    this.#collect = collect;
  }

  /** A body of `bytes` no longer held (its file replaced or deleted). */
  dropped(bytes: number): void {
    this.#dropped += bytes;
    if (this.#dropped >= RELEASE_NOW_BYTES) {
      if (this.#soon) return;
      this.#soon = true;
      // after the messages of this turn (a burst of deletes is one collection)
      setImmediate(() => this.run());
    } else if (this.#dropped >= RELEASE_LATER_BYTES && !this.#later) {
      this.#later = setTimeout(() => this.run(), LATER_MS).unref();
    }
  }

  /** Collects now when anything was dropped. */
  run(): void {
    this.#soon = false;
    clearTimeout(this.#later);
    this.#later = undefined;
    if (this.#dropped === 0) return;
    this.#dropped = 0;
    if (this.#collect()) this.collections++;
  }

  close(): void {
    clearTimeout(this.#later);
    this.#later = undefined;
  }
}
