import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { v8Gc, type Gc } from './v8-gc.ts';
import type { Trim } from './malloc-trim.ts';

/** How often the collector looks (an unref'd timer: it never keeps the process up). */
export const QUIET_CHECK_MS = 2_000;
/** The longest wait between two looks once nothing happens (the wait doubles from `QUIET_CHECK_MS`). */
export const QUIET_CHECK_MAX_MS = 16_000;
/** Growth of the committed heap or RSS per `QUIET_CHECK_MS` since the previous look under which a quiet look saw nothing happen. */
export const CALM_BYTES = 1024 * 1024;
/** Event-loop utilisation under which the service counts as quiet over the last check. */
export const QUIET_UTILIZATION = 0.1;
/** Growth of V8's committed heap since the last reduction that is worth one. */
export const GROWTH_BYTES = 16 * 1024 * 1024;
/** The least time between two reductions: a bounded share of the CPU whatever the traffic. */
export const MIN_GAP_MS = 4_000;

/** Growth of the resident set since the last trim that is worth asking glibc for its free pages. */
export const TRIM_GROWTH_BYTES = 16 * 1024 * 1024;

/** Whether to trim malloc's arenas on a quiet look (pure, for tests): after a reduction, or after RSS growth. */
export function shouldTrim(s: { utilization: number; rss: number; baseline: number | undefined; reduced: boolean }): boolean {
  if (s.utilization > QUIET_UTILIZATION) return false;
  return s.reduced || s.baseline === undefined || s.rss >= s.baseline + TRIM_GROWTH_BYTES;
}

/**
 * The wait before the next look (pure, for tests): doubled after a calm look (quiet, nothing done,
 * the heap and RSS not grown by `CALM_BYTES` since the previous one), up to `QUIET_CHECK_MAX_MS`; back
 * to `QUIET_CHECK_MS` after any other. An idle service looks every 16 s instead of every 2 s (issue
 * 46.2); a burst is seen at the next look, averaged over the longer wait.
 */
export function nextCheckMs(waitMs: number, calm: boolean): number {
  return calm ? Math.min(waitMs * 2, QUIET_CHECK_MAX_MS) : QUIET_CHECK_MS;
}

/**
 * Whether a look saw nothing happen (pure, for tests): quiet, nothing reduced or trimmed, and the
 * committed heap and RSS grew less than `CALM_BYTES` per `QUIET_CHECK_MS` of the wait since the
 * previous look. A rate, so an idle service's slow drift (a page of the young generation touched
 * now and then: 1.5 MB in 16 s) does not bring the looks back to every 2 s (issue 46.2).
 */
export function isCalm(s: {
  utilization: number; reduced: boolean; trimmed: boolean; waitedMs: number;
  committed: number; committedBefore: number; rss: number; rssBefore: number;
}): boolean {
  if (s.utilization > QUIET_UTILIZATION || s.reduced || s.trimmed) return false;
  const allowed = CALM_BYTES * Math.max(1, s.waitedMs / QUIET_CHECK_MS);
  return s.committed < s.committedBefore + allowed && s.rss < s.rssBefore + allowed;
}

/**
 * What the collector decides from one look (pure, for tests). `rss` and `rssBaseline` (RSS after
 * the last reduction, main thread only) with `busySince` (a look since then was busy): the first
 * quiet look after a busy spell also reduces when RSS stayed 16 MB up. V8's own collections
 * during the spell shrink the committed heap, but keep the pages they freed pooled, outside it,
 * until a memory-reducing one (issue 46: 50,000 process creations and deletions, then 148 MB
 * idle with a 35 MB heap; one memory-reducing collection: 92 MB).
 */
export function shouldReduce(s: {
  utilization: number; committed: number; baseline: number | undefined; sinceLastMs: number;
  rss?: number; rssBaseline?: number; busySince?: boolean;
}): boolean {
  if (s.utilization > QUIET_UTILIZATION || s.sinceLastMs < MIN_GAP_MS) return false;
  if (s.baseline === undefined || s.committed >= s.baseline + GROWTH_BYTES) return true;
  return s.busySince === true && s.rss !== undefined && s.rssBaseline !== undefined && s.rss >= s.rssBaseline + GROWTH_BYTES;
}

/**
 * Memory that comes back (issue 29): V8 keeps the heap it grew to for a burst (the young
 * generation it enlarged, old-space pages freed by a collection) until its memory reducer gets to
 * it, which a service that is never idle for long rarely sees: RSS stayed tens of MB above idle
 * after a burst of API requests or a boot. Once the boot is over, and then whenever the committed
 * heap grew by 16 MB since the last time and the event loop was quiet since the last look, this runs
 * one memory-reducing collection (V8's "last resort": full, compacting, shrinking the young
 * generation, giving pages back), at most once per 4 s. It looks every 2 s, and while nothing
 * happens ever less often, up to every 16 s (`nextCheckMs`).
 *
 * With `trim` (the main thread's `mallocTrim()`), a quiet look also asks glibc for the free pages
 * of its arenas after a reduction and whenever RSS grew 16 MB since the last trim: what a load
 * freed outside V8 (socket buffers, bodies, the serving threads' arenas) stays with the process
 * otherwise.
 */
export function startQuietCollector(gc: Gc | undefined = v8Gc(), trim?: Trim): QuietCollector {
  const counts = { reductions: 0, trims: 0 };
  const collector: QuietCollector = { stop: () => clearTimeout(timer), get reductions() { return counts.reductions; }, get trims() { return counts.trims; } };
  let baseline: number | undefined;
  let trimBaseline: number | undefined;
  // RSS after the last reduction, and whether a look was busy since (main thread: `trim` given)
  let rssBaseline: number | undefined;
  let busySince = false;
  let last = 0;
  let mark: EventLoopUtilization = performance.eventLoopUtilization();
  // the previous look's committed heap and RSS, and the wait before the next look
  let before = { committed: 0, rss: 0 };
  let wait = QUIET_CHECK_MS;
  const look = (): void => {
    const utilization = performance.eventLoopUtilization(mark).utilization;
    mark = performance.eventLoopUtilization();
    if (utilization > QUIET_UTILIZATION) busySince = true;
    let reduced = false;
    const seen = { committed: getHeapStatistics().total_heap_size, rss: process.memoryUsage.rss() };
    const looked = trim ? { rss: seen.rss, rssBaseline, busySince } : {};
    if (gc && shouldReduce({ utilization, committed: seen.committed, baseline, sinceLastMs: Date.now() - last, ...looked })) {
      gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      counts.reductions++;
      reduced = true;
      last = Date.now();
      baseline = getHeapStatistics().total_heap_size;
      busySince = false;
    }
    const rss = trim ? process.memoryUsage.rss() : 0;
    // growth counts from the lowest RSS since the last trim
    if (trimBaseline !== undefined && rss < trimBaseline) trimBaseline = rss;
    const trimmed = trim !== undefined && shouldTrim({ utilization, rss, baseline: trimBaseline, reduced });
    if (trimmed) {
      trim();
      counts.trims++;
      trimBaseline = process.memoryUsage.rss();
    }
    if (reduced && trim) rssBaseline = process.memoryUsage.rss();
    const calm = isCalm({ utilization, reduced, trimmed, waitedMs: wait, committed: seen.committed,
      committedBefore: before.committed, rss: seen.rss, rssBefore: before.rss });
    before = seen;
    wait = nextCheckMs(wait, calm);
    timer = setTimeout(look, wait).unref();
  };
  let timer = setTimeout(look, wait).unref();
  return collector;
}

export interface QuietCollector {
  stop(): void;
  /** Memory-reducing collections run so far. */
  readonly reductions: number;
  /** Times malloc's arenas were trimmed so far. */
  readonly trims: number;
}
