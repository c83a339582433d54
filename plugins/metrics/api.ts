import { createServiceRef } from '../../sdk/index.ts';

/*
 * The metrics plugin's contract for other plugins (and vendors): collectors and the query.
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
  /**
   * Label values by label name; empty for label-less metrics. Keep one frozen object per label
   * set and give it every collection: the history and the Prometheus text then find the series
   * by that object (a new object each time works, at the cost of making its key every sample).
   */
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

/** A metrics query (reference 5.16 `MetricsQuery`): label values are regexes matched unanchored. */
export interface MetricsQueryInput {
  /** 0 (or absent) = the current values; else that many seconds of history. */
  timerange_sec?: number;
  interval_sec?: number;
  metrics?: readonly { name: string; labels?: Readonly<Record<string, string>> | null }[];
}

/** Its answer (reference 5.16 `MetricsResponse`): values are `[unix_seconds, value]`. */
export interface MetricsQueryResult {
  timerange_sec: number;
  interval_sec: number;
  metrics: { name: string; labels: Readonly<Record<string, string>> | null; values: [number, number][] }[];
}

/**
 * The query behind `POST /api/v3/metrics` (reference 12.3), provided by the `metrics` plugin so
 * other front ends (GraphQL `metrics`) answer from the same code; absent when it is not loaded.
 *
 * @example
 * deps: { metrics: optional(metricsQueryRef) },
 * setup(ctx) {
 *   const cpu = ctx.deps.metrics?.query({ metrics: [{ name: 'cpu_idle' }] }).metrics[0]?.values[0]?.[1];
 * }
 */
export interface MetricsQueryService {
  query(q: MetricsQueryInput): MetricsQueryResult;
}

/**
 * Where the `metrics` plugin provides its query service (one provider).
 *
 * @example
 * deps: { metrics: optional(metricsQueryRef) }
 */
export const metricsQueryRef = createServiceRef<MetricsQueryService>('metrics.query');
