import { v8Gc } from './runtime/v8-gc.ts';

/**
 * After a reload the whole previous app (its routes, compiled validators, plugin state) is
 * garbage, tens of MB of it, and a reload allocates as much again; V8 answers a burst like that
 * by growing the young generation and the old-space limit, and a busy service rarely goes idle
 * long enough for V8's memory reducer to give it back. One memory-reducing collection here (a
 * "last resort" GC: full, compacting, dropping compilation caches) returns the heap to what the
 * new app holds, so RSS does not creep up reload after reload. It costs one full GC (tens of ms
 * with the default plugins) per reload, which the operator asked for and which rebuilt everything anyway.
 */
export function releaseMemoryAfterReload(): void {
  try {
    v8Gc()?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  } catch {
    // a runtime without the gc extension: V8's own memory reducer gets to it later
  }
}

/** A JSON body at least this large leaves garbage worth collecting at once (3.5 MB of metadata: ~10 MB). */
export const LARGE_BODY_BYTES = 1024 * 1024;
/** Collections after large bodies are at most this frequent. */
const LARGE_BODY_GC_MS = 100;
let lastGc = 0;
let pendingGc: NodeJS.Timeout | undefined;

/**
 * After a large JSON body is answered, its text and parsed copy are garbage in V8's large-object
 * space; V8 grows its heap limit under a burst of them before collecting, so 20 bodies of 3.5 MB
 * in a row added about 100 MB of RSS that stayed. One full collection right after (at most one
 * per 100 ms, whatever the rate of large bodies, so a flood of them costs a bounded share of the
 * CPU) frees those pages, which V8 gives back to the OS at once. Ordinary requests never trigger it.
 */
export function collectAfterLargeBody(): void {
  if (pendingGc) return;
  const wait = Math.max(0, lastGc + LARGE_BODY_GC_MS - Date.now());
  pendingGc = setTimeout(() => {
    pendingGc = undefined;
    lastGc = Date.now();
    try {
      v8Gc()?.({ type: 'major', execution: 'sync' });
    } catch {
      // without the gc extension V8 collects on its own schedule
    }
  }, wait).unref();
}
