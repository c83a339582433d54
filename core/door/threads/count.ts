import { availableParallelism } from 'node:os';
import { AUTO_MAX_THREADS } from '../../../sdk/config/thread-limits.ts';

/** `http.threads: -1`: as many serving threads as the core count suggests (see servingThreadCount). */
export const AUTO_THREADS = -1;

/**
 * The serving threads to run for `http.threads`: the number itself, or for `-1` (auto) none below
 * 4 cores (on 2-3 cores a thread takes CPU the main loop, ffmpeg and the TLS listener need: the
 * measured gain there is small), else one per core but one (the main loop keeps a core), at most
 * AUTO_MAX_THREADS (each thread is a heap of its own, about 30 MiB).
 *
 * @example
 * servingThreadCount(-1, 8); // 7
 * servingThreadCount(-1, 2); // 0
 */
export function servingThreadCount(configured: number, cores = availableParallelism()): number {
  if (configured !== AUTO_THREADS) return configured;
  return cores < 4 ? 0 : Math.min(cores - 1, AUTO_MAX_THREADS);
}
