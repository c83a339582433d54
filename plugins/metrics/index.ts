import { definePlugin, filesystemsRef, httpHooksRef, processesRef } from '../../sdk/index.ts';
import { metricCollectorsRef, metricsQueryRef, type MetricCollector } from './api.ts';
import { MetricsConfig, validateMetrics } from './schema.ts';

/**
 * Metrics: its own collectors (system, filesystems, processes) plus every plugin's through
 * `metricCollectorsRef`; sampled every `metrics.interval_sec` over `range_sec` when `enable`;
 * `GET`/`POST /api/v3/metrics`; `/metrics` for Prometheus when `enable_prometheus`.
 */
export default definePlugin({
  name: 'metrics',
  configKey: 'metrics',
  enableKey: 'metrics.enable',
  configSchema: MetricsConfig,
  validate: validateMetrics,
  reads: ['id', 'storage'],
  deps: { contributed: metricCollectorsRef, processes: processesRef, filesystems: filesystemsRef },
  provides: [metricsQueryRef],
  async setup(ctx) {
    const { contributed, processes, filesystems } = ctx.deps;
    // imported when mounted (the core reads every built-in's definition); the Prometheus writer only when on
    const [{ filesystemsCollector }, { processesCollector }, { zeroSessionsCollector }, { SystemCollector }, { metricsRoutes, prometheusRoute }, { MetricsService }] = await Promise.all([
      import('./collectors/filesystems.ts'), import('./collectors/processes.ts'), import('./collectors/sessions-zero.ts'),
      import('./collectors/system.ts'), import('./routes.ts'), import('./service.ts'),
    ]);
    const system = new SystemCollector(ctx.sections.storage.disk.dir);
    ctx.onClose(() => system.close());
    const own: MetricCollector[] = [
      system,
      filesystemsCollector(() => filesystems),
      processesCollector(processes),
    ];
    // without a sessions plugin clients still read session_* (restreamer-ui): zeros, not absence
    const zeros = zeroSessionsCollector();
    // the list is made again only when a provider joined (each sample reads it: issue 46.2)
    let list: readonly MetricCollector[] = [];
    let listed = -1;
    const collectors = (): readonly MetricCollector[] => {
      if (listed === contributed.length) return list;
      const hasSessions = contributed.some((c) => c.describe().some((d) => d.name === 'session_active'));
      list = hasSessions ? [...own, ...contributed] : [...own, ...contributed, zeros];
      listed = contributed.length;
      return list;
    };

    const metrics = new MetricsService({ config: ctx.config, collectors, log: ctx.log });
    // the same query for POST /api/v3/metrics and for others (GraphQL `metrics`)
    ctx.provide(metricsQueryRef, { query: (q) => metrics.query(q) });
    metricsRoutes(ctx.http, metrics, ctx.hooks.get(httpHooksRef).sees);
    if (ctx.config.enable_prometheus) {
      const help = new Map(metrics.describe().map((d) => [d.name, d.description]));
      const { PrometheusExport } = await import('./prometheus.ts');
      prometheusRoute(ctx.http, metrics, new PrometheusExport(ctx.sections.id, help));
    }

    ctx.onReady(() => metrics.start());
    ctx.onClose(() => metrics.stop());
  },
});
