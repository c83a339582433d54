/*
 * The V8 flags the service runs with (issue 29, point 5; the measurements are in README.md here).
 * Pure: what to add to a command line, given the memory limit and the flags already on it.
 */

/** Young generation semi-space in MiB: V8's default grows to 16 MiB per semi-space (48 MiB young generation). */
export const SEMI_SPACE_MB = 2;
/**
 * The old generation may grow to twice what a full collection left live before the next one
 * (`--heap-growing-percent`; V8 picks 1.1-4x from its speeds and chose little here): streams keep
 * their recent packets and parts for seconds, so they reach the old space and a 30 MB heap was
 * marked about once a second, the helpers' marking as much CPU again as packaging (README.md here).
 */
export const HEAP_GROWING_PERCENT = 100;
/**
 * glibc malloc arenas: one per thread up to 8 per core by default, each keeping its freed pages;
 * two keep the runtime's and libuv's threads apart at about 3 MB less idle (README.md here). With
 * serving threads, each JavaScript thread keeps its own (they allocate a lot: shared arenas
 * fragmented, 1.5x idle after a load against 1.4x), so the limit is left to glibc.
 */
export const MALLOC_ARENAS = '2';
/** What the heap leaves of `debug.memory_limit_mbytes` for code, buffers and the runtime itself. */
export const NON_HEAP_MB = 64;
/** The smallest old space a memory limit sets. */
export const MIN_OLD_SPACE_MB = 64;

/**
 * The flags for a memory limit (`debug.memory_limit_mbytes`, 0 = none): the semi-space and the heap growing always,
 * `--max-old-space-size` when there is a limit. A flag the operator already gave (on the command
 * line or in NODE_OPTIONS) is theirs and left out.
 */
export function runtimeFlags(memoryLimitMb: number, given: readonly string[]): string[] {
  const has = (name: string) => given.some((a) => a === name || a.startsWith(`${name}=`));
  const out: string[] = [];
  if (!has('--max-semi-space-size')) out.push(`--max-semi-space-size=${SEMI_SPACE_MB}`);
  if (!has('--heap-growing-percent')) out.push(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  if (memoryLimitMb > 0 && !has('--max-old-space-size')) {
    out.push(`--max-old-space-size=${Math.max(MIN_OLD_SPACE_MB, Math.floor(memoryLimitMb) - NON_HEAP_MB)}`);
  }
  return out;
}

/** The environment the service runs with: the arena count, without serving threads, unless the operator set one. */
export function runtimeEnv(env: NodeJS.ProcessEnv, servingThreads: number): NodeJS.ProcessEnv | undefined {
  return env.MALLOC_ARENA_MAX === undefined && servingThreads === 0 ? { MALLOC_ARENA_MAX: MALLOC_ARENAS } : undefined;
}

/** `http.threads` from the raw config text and the environment (which wins); -1 (auto) when unsaid. */
export function threadsSettingOf(configText: string | undefined, env: NodeJS.ProcessEnv): number {
  const fromEnv = Number(env.CORE_HTTP_THREADS);
  if (env.CORE_HTTP_THREADS !== undefined && Number.isInteger(fromEnv)) return fromEnv;
  try {
    const v = configText ? (JSON.parse(configText) as { http?: { threads?: unknown } }).http?.threads : undefined;
    return typeof v === 'number' && Number.isInteger(v) ? v : -1;
  } catch {
    return -1;
  }
}

/** `debug.memory_limit_mbytes` from the raw config text and the environment (which wins, as for every key). */
export function memoryLimitOf(configText: string | undefined, env: NodeJS.ProcessEnv): number {
  const fromEnv = Number(env.CORE_DEBUG_MEMORY_LIMIT_MBYTES);
  if (env.CORE_DEBUG_MEMORY_LIMIT_MBYTES !== undefined && Number.isFinite(fromEnv)) return Math.max(0, fromEnv);
  if (!configText) return 0;
  try {
    const v = (JSON.parse(configText) as { debug?: { memory_limit_mbytes?: unknown } }).debug?.memory_limit_mbytes;
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0;
  } catch {
    return 0; // the config loader says what is wrong with the file; the flags just stay V8's
  }
}
