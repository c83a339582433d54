import type { HttpScope, Static } from '../../sdk/index.ts';
import type { SessionView } from './api.ts';
import { CollectorsQuery, SessionsActiveSchema, SessionsSummarySchema, type SessionSummarySchema } from './schema.ts';
import type { SessionRegistry } from './registry.ts';

/** Split on `,` without trimming, as the reference does; absent means one empty name. */
const namesOf = (q: string | undefined) => (q === undefined ? [''] : q.split(','));

/** `GET /api/v3/session` and `GET /api/v3/session/active` (reference 4.11). */
export function sessionRoutes(http: HttpScope, registry: SessionRegistry | undefined): void {
  http.get('/api/v3/session', {
    schema: {
      summary: 'Summary of active and past sessions per collector', tags: ['v16.7.2'],
      querystring: CollectorsQuery, response: { 200: SessionsSummarySchema },
    },
  }, async (req) => {
    const out: Record<string, Static<typeof SessionSummarySchema>> = {};
    for (const name of namesOf(req.query.collectors)) out[name] = (registry ?? EMPTY).summary(name);
    return out;
  });
  http.get('/api/v3/session/active', {
    schema: {
      summary: 'Active sessions per collector', tags: ['v16.7.2'],
      querystring: CollectorsQuery, response: { 200: SessionsActiveSchema },
    },
  }, async (req) => {
    const out: Record<string, SessionView[]> = {};
    for (const name of namesOf(req.query.collectors)) out[name] = registry?.get(name)?.active() ?? [];
    return out;
  });
}

/** What a disabled `sessions` answers: an empty summary for every name. */
const EMPTY = {
  summary: () => ({
    active: { list: [], sessions: 0, bandwidth_rx_mbit: 0, bandwidth_tx_mbit: 0, max_sessions: 0, max_bandwidth_rx_mbit: 0, max_bandwidth_tx_mbit: 0 },
    summary: { remote: {}, local: {}, reference: {}, sessions: 0, traffic_rx_mb: 0, traffic_tx_mb: 0 },
  }),
};
