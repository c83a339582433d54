import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc` with its options (full or minor, sync or not, a memory-reducing last resort). */
export type Gc = (opts?: { type?: 'major' | 'minor'; execution?: 'sync' | 'async'; flavor?: 'regular' | 'last-resort' }) => void;

let cached: Gc | undefined;

/**
 * V8's `gc` for this isolate (main or a serving thread), with or without `--expose-gc` on the
 * command line (the service runs without it). The flag is on only for the instant a fresh context
 * takes the function, so no global scope (main's, a thread's, a plugin's) ever gets a `gc`; V8 has
 * no flag-free call for a collection (a transient external allocation works once, then V8 raises
 * its limit). Undefined when the runtime refuses.
 */
export function v8Gc(): Gc | undefined {
  if (cached) return cached;
  const global = (globalThis as { gc?: Gc }).gc;
  if (global) return (cached = global);
  try {
    setFlagsFromString('--expose-gc');
    cached = runInNewContext('typeof gc === "function" ? gc : undefined') as Gc | undefined;
  } catch {
    cached = undefined;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return cached;
}
