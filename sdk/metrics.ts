import { createServiceRef } from './refs.ts';

/*
 * Metrics: every plugin contributes its own figures through a collector; the `metrics` plugin
 * samples all collectors every `metrics.interval_sec`, answers `POST /api/v3/metrics` from the
 * history and renders `/metrics` for Prometheus. Names and labels follow reference 12.4.
 */

/** What a metric is, for `GET /api/v3/metrics` (reference 12.4). */
export interface MetricDescription {
  /** Internal name, e.g. `session_active`, `restream_process`. */
  name: string;
  description: string;
  /** Label names every value of this metric carries, in a stable order. */
  labels: readonly string[];
}

/** One value of one series at collection time. */
export interface MetricValue {
  name: string;
  /** Label values by label name; empty for label-less metrics. */
  labels: Readonly<Record<string, string>>;
  value: number;
}

/**
 * A contributor of figures (multi-provider). `collect()` is called on every sampling tick and for
 * current-value queries: keep it cheap, synchronous and free of I/O that can block (read what the
 * plugin already keeps; /proc reads are fine).
 *
 * @example
 * provides: [metricCollectorsRef],
 * setup(ctx) {
 *   ctx.provide(metricCollectorsRef, {
 *     describe: () => [{ name: 'vendor_streams', description: 'Streams now live', labels: [] }],
 *     collect: () => [{ name: 'vendor_streams', labels: {}, value: live.size }],
 *   });
 * }
 */
export interface MetricCollector {
  describe(): readonly MetricDescription[];
  collect(): readonly MetricValue[];
}

/**
 * Where plugins provide their metric collectors (many providers); the metrics plugin reads them all.
 *
 * @example
 * deps: { collectors: metricCollectorsRef } // ctx.deps.collectors: readonly MetricCollector[]
 */
export const metricCollectorsRef = createServiceRef<MetricCollector, true>('metrics.collectors', { multiple: true });
