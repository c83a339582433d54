import type { Logger } from 'pino';
import type { MetricCollector, MetricDescription, MetricsQueryInput, MetricValue } from './api.ts';
import { MetricsHistory } from './history.ts';
import { compilePatterns, currentValues, historyValues } from './query.ts';
import type { MetricsConfig, MetricsResponse } from './schema.ts';

export interface MetricsServiceOptions {
  config: MetricsConfig;
  /** Every contributor, the plugin's own first; read on each use. */
  collectors: () => readonly MetricCollector[];
  log: Logger;
}

/**
 * Collects from every collector, keeps the sampled history when `metrics.enable` is on and
 * answers queries. No HTTP in here (routes.ts, prometheus.ts).
 */
export class MetricsService {
  readonly #o: MetricsServiceOptions;
  readonly #history: MetricsHistory | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Collectors whose collect() threw, logged once each. */
  readonly #failed = new WeakSet<MetricCollector>();

  constructor(o: MetricsServiceOptions) {
    this.#o = o;
    const c = o.config;
    if (c.enable) this.#history = new MetricsHistory(Math.floor(c.range_sec / c.interval_sec));
  }

  /** Starts sampling (history on only); the first sample is taken at once. */
  start(): void {
    if (!this.#history || this.#timer) return;
    this.sample();
    this.#timer = setInterval(() => this.sample(), this.#o.config.interval_sec * 1000);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  sample(): void {
    this.#history?.record(Date.now(), this.collect());
  }

  /** Every current value of every collector; one failing collector does not hide the others. */
  collect(): MetricValue[] {
    const out: MetricValue[] = [];
    for (const c of this.#o.collectors()) {
      try {
        for (const v of c.collect()) out.push(v);
      } catch (err) {
        if (!this.#failed.has(c)) this.#o.log.warn({ err }, 'a metric collector failed; its figures are left out');
        this.#failed.add(c);
      }
    }
    return out;
  }

  /** `GET /api/v3/metrics`: every description, one per name, sorted by name. */
  describe(): { name: string; description: string; labels: string[] }[] {
    const byName = new Map<string, MetricDescription>();
    for (const c of this.#o.collectors()) for (const d of c.describe()) if (!byName.has(d.name)) byName.set(d.name, d);
    return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((d) => ({ name: d.name, description: d.description, labels: [...d.labels] }));
  }

  /** `POST /api/v3/metrics` (reference 12.3), also the `metricsQueryRef` service. */
  query(q: MetricsQueryInput): MetricsResponse {
    const c = this.#o.config;
    const patterns = compilePatterns(q);
    const now = Date.now();
    const timerange = q.timerange_sec ?? 0;
    const resolution = this.#history ? { timerange_sec: c.range_sec, interval_sec: c.interval_sec } : { timerange_sec: 0, interval_sec: 0 };
    if (timerange === 0) return { ...resolution, metrics: patterns.length ? currentValues(patterns, this.collect(), now) : [] };
    if (!this.#history) return { ...resolution, metrics: [] };
    const metrics = historyValues(patterns, this.#history, {
      timerange, interval: q.interval_sec ?? 0, configuredInterval: c.interval_sec, now,
    });
    return { ...resolution, metrics };
  }
}
