import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { v8Gc, type Gc } from './v8-gc.ts';

/** How often the collector looks (an unref'd timer: it never keeps the process up). */
export const QUIET_CHECK_MS = 2_000;
/** Event-loop utilisation under which the service counts as quiet over the last check. */
export const QUIET_UTILIZATION = 0.1;
/** Growth of V8's committed heap since the last reduction that is worth one. */
export const GROWTH_BYTES = 16 * 1024 * 1024;
/** The least time between two reductions: a bounded share of the CPU whatever the traffic. */
export const MIN_GAP_MS = 4_000;

/** What the collector decides from one look (pure, for tests). */
export function shouldReduce(s: { utilization: number; committed: number; baseline: number | undefined; sinceLastMs: number }): boolean {
  if (s.utilization > QUIET_UTILIZATION || s.sinceLastMs < MIN_GAP_MS) return false;
  return s.baseline === undefined || s.committed >= s.baseline + GROWTH_BYTES;
}

/**
 * Memory that comes back (issue 29): V8 keeps the heap it grew to for a burst (the young
 * generation it enlarged, old-space pages freed by a collection) until its memory reducer gets to
 * it, which a service that is never idle for long rarely sees: RSS stayed tens of MB above idle
 * after a burst of API requests or a boot. Once the boot is over, and then whenever the committed
 * heap grew by 16 MB since the last time and the event loop was quiet for the last 2 s, this runs
 * one memory-reducing collection (V8's "last resort": full, compacting, shrinking the young
 * generation, giving pages back), at most once per 4 s.
 */
export function startQuietCollector(gc: Gc | undefined = v8Gc()): { stop(): void; readonly reductions: number } {
  let reductions = 0;
  if (!gc) return { stop: () => {}, get reductions() { return reductions; } };
  let baseline: number | undefined;
  let last = 0;
  let mark: EventLoopUtilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const utilization = performance.eventLoopUtilization(mark).utilization;
    mark = performance.eventLoopUtilization();
    const committed = getHeapStatistics().total_heap_size;
    if (!shouldReduce({ utilization, committed, baseline, sinceLastMs: Date.now() - last })) return;
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    reductions++;
    last = Date.now();
    baseline = getHeapStatistics().total_heap_size;
  }, QUIET_CHECK_MS);
  timer.unref();
  return { stop: () => clearInterval(timer), get reductions() { return reductions; } };
}
