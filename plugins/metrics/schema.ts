import { Bool, ConfigErrorList, type ConfigErrors, Int, section, type Static, Type } from '../../sdk/index.ts';

/** The plugin's settings: the `metrics` section of the configuration, owned by this plugin (enable, enable_prometheus, range_sec, interval_sec). */
export const MetricsConfig = section({
  enable: [Bool(false), 'Keep a sampled history of the metrics (plugin `metrics`); current values answer either way.'],
  enable_prometheus: [Bool(false), 'Serve `/metrics` in the Prometheus text format.'],
  // the history holds range_sec / interval_sec samples per series; the sampling timer takes interval_sec
  range_sec: [Int(300, { maximum: 604_800 }), 'Seconds of metrics kept (at most a week, 604800).'],
  interval_sec: [Int(2, { maximum: 86_400 }), 'Seconds between metric samples (at most a day, 86400).'],
});
export type MetricsConfig = Static<typeof MetricsConfig>;

/**
 * Rules a schema cannot state; keys relative to `metrics`. Checked only when history is on, as
 * the reference does (its checks exist but never fire; an enabled history with a zero interval
 * could not sample, so here they do).
 */
export function validateMetrics(m: MetricsConfig): ConfigErrors {
  const errs = new ConfigErrorList();
  if (!m.enable) return errs.map;
  if (m.range_sec <= 0) errs.add('range_sec', 'must be positive');
  if (m.interval_sec <= 0) errs.add('interval_sec', 'must be positive');
  else if (m.interval_sec > m.range_sec) errs.add('interval_sec', 'must not be bigger than metrics.range_sec');
  return errs.map;
}

/** `MetricsDescription` (reference 5.16). */
export const MetricsDescription = Type.Object({
  name: Type.String(),
  description: Type.String(),
  labels: Type.Array(Type.String()),
});

/** `MetricsQuery` (reference 5.16): a missing range or interval is 0, as clients (restreamer-ui) omit them. */
export const MetricsQuery = Type.Object({
  timerange_sec: Type.Optional(Type.Integer({ minimum: 0 })),
  interval_sec: Type.Optional(Type.Integer({ minimum: 0 })),
  metrics: Type.Optional(Type.Array(Type.Object({
    name: Type.String(),
    labels: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  }))),
});
export type MetricsQuery = Static<typeof MetricsQuery>;

/** `MetricsResponse` (reference 5.16): values are `[unix_seconds, value]`; labels null when there are none. */
export const MetricsResponse = Type.Object({
  timerange_sec: Type.Integer(),
  interval_sec: Type.Integer(),
  metrics: Type.Array(Type.Object({
    name: Type.String(),
    labels: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
    values: Type.Array(Type.Tuple([Type.Integer(), Type.Number()])),
  })),
});
export type MetricsResponse = Static<typeof MetricsResponse>;
