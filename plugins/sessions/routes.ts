import type { FastifyRequest } from 'fastify';
import type { httpHooksRef, HttpScope, TSchema } from '../../sdk/index.ts';
import { CollectorsQuery, SessionsActiveSchema, SessionsSummarySchema, type SessionSummary } from './schema.ts';
import type { SessionRegistry } from './registry.ts';

/** `{<name>: one(name)}` for `?collectors=`, split on `,` without trimming as the reference does; absent means one empty name. */
const perCollector = <T>(q: string | undefined, one: (name: string) => T): Record<string, T> =>
  Object.fromEntries((q === undefined ? [''] : q.split(',')).map((name) => [name, one(name)]));

/** `GET /api/v3/session` and `.../active` (reference 4.11), unknown names empty; an access plugin's user sees what `httpHooksRef.sees` lets it. */
export function sessionRoutes(http: HttpScope, registry: SessionRegistry, sees: ReturnType<(typeof httpHooksRef)['create']>['sees']): void {
  // a session is about its reference (a process, or a stream's base name) or the stream of its location (`publish:live/x`)
  const keep = (req: FastifyRequest) => (sees.isUsed() ? (ref: string, local = '') => sees.call(req, { process: ref, stream: local.replace(/^[a-z]+:/, '') || ref }) !== false : undefined);
  const schema = <S extends TSchema>(summary: string, answer: S) =>
    ({ summary, tags: ['v16.7.2'], querystring: CollectorsQuery, response: { 200: answer } });
  http.get('/api/v3/session', { schema: schema('Summary of active and past sessions per collector', SessionsSummarySchema) },
    async (req) => { const k = keep(req); return perCollector(req.query.collectors, (name) => (k ? narrow(registry.summary(name), k) : registry.summary(name))); });
  http.get('/api/v3/session/active', { schema: schema('Active sessions per collector', SessionsActiveSchema) },
    async (req) => { const k = keep(req); return perCollector(req.query.collectors, (name) => (k ? (registry.get(name)?.active() ?? []).filter((s) => k(s.reference, s.local)) : registry.get(name)?.active() ?? [])); });
}

/** A summary of the references `keep` lets the caller see (the peers' maps span every reference: empty). */
function narrow(s: SessionSummary, keep: (ref: string, local?: string) => boolean): SessionSummary {
  const [list, reference] = [s.active.list.filter((x) => keep(x.reference, x.local)), Object.fromEntries(Object.entries(s.summary.reference).filter(([r]) => keep(r)))];
  const sum = (k: 'sessions' | 'traffic_rx_mb' | 'traffic_tx_mb') => Object.values(reference).reduce((a, t) => a + t[k], 0);
  const mbit = (k: 'bandwidth_rx_kbit' | 'bandwidth_tx_kbit') => list.reduce((a, x) => a + x[k], 0) / 1000;
  return { active: { ...s.active, list, sessions: list.length, bandwidth_rx_mbit: mbit('bandwidth_rx_kbit'), bandwidth_tx_mbit: mbit('bandwidth_tx_kbit') },
    summary: { remote: {}, local: {}, reference, sessions: sum('sessions'), traffic_rx_mb: sum('traffic_rx_mb'), traffic_tx_mb: sum('traffic_tx_mb') } };
}
