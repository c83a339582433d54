import { isMainThread } from 'node:worker_threads';

/** Gives glibc's free pages back to the system; true when some were. */
export type Trim = () => boolean;

const MODULE = new URL('./trim/build/malloc-trim.node', import.meta.url);

let cached: Trim | null | undefined;

/**
 * glibc's `malloc_trim(0)` through the runtime's one-function module (`trim/malloc-trim.c`, built by
 * `scripts/ensure-trim.sh`), or undefined when it is not built or not loadable (another libc, no
 * compiler at install). The main thread only: one call trims every arena of the process, the
 * serving threads' too.
 */
export function mallocTrim(): Trim | undefined {
  if (cached !== undefined) return cached ?? undefined;
  cached = null;
  if (!isMainThread || process.platform !== 'linux') return undefined;
  try {
    const mod = { exports: {} as { trim?: unknown } };
    process.dlopen(mod, MODULE.pathname);
    if (typeof mod.exports.trim === 'function') cached = mod.exports.trim as Trim;
  } catch {
    // not built here (no compiler at install): the service keeps what the arenas hold
  }
  return cached ?? undefined;
}
