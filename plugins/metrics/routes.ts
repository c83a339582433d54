import { NETWORK, Type, type HttpScope, type httpHooksRef } from '../../sdk/index.ts';
import type { PrometheusExport } from './prometheus.ts';
import { MetricsDescription, MetricsQuery, MetricsResponse } from './schema.ts';
import type { MetricsService } from './service.ts';

/**
 * `GET` and `POST /api/v3/metrics` (reference 4.13, 12.3). An access plugin's user gets the series
 * of what it may see (`httpHooksRef.sees`: a series with a `processid` label is about that
 * process; one without is the service's own).
 */
export function metricsRoutes(http: HttpScope, metrics: MetricsService, sees?: ReturnType<(typeof httpHooksRef)['create']>['sees']): void {
  http.get('/api/v3/metrics', {
    schema: {
      summary: 'List all known metrics with their description and labels', tags: ['v16.10.0'],
      response: { 200: Type.Array(MetricsDescription) },
    },
  }, async () => metrics.describe());

  http.post('/api/v3/metrics', {
    // a query: allowed with api.read_only
    config: { mutates: false },
    schema: {
      summary: 'Query the collected metrics', tags: ['v16.7.2'],
      body: MetricsQuery, response: { 200: MetricsResponse },
    },
  }, async (req) => {
    const r = metrics.query(req.body);
    if (!sees?.isUsed()) return r;
    return { ...r, metrics: r.metrics.filter((m) => sees.call(req, m.labels?.processid === undefined ? {} : { process: m.labels.processid }) !== false) };
  });
}

/** `GET /metrics` in the Prometheus text format (reference 4.16): no credential, the API's IP lists apply. */
export function prometheusRoute(http: HttpScope, metrics: MetricsService, prom: PrometheusExport): void {
  http.get('/metrics', { config: NETWORK, schema: { hide: true } }, async (_req, reply) => {
    const text = await prom.render(metrics.collect());
    reply.header('content-type', prom.contentType);
    reply.raw.once('finish', () => prom.served(200));
    return text;
  });
}
