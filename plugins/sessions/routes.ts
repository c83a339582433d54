import type { HttpScope } from '../../sdk/index.ts';
import type { SessionView } from './api.ts';
import { CollectorsQuery, SessionsActiveSchema, SessionsSummarySchema, type SessionSummary } from './schema.ts';
import type { SessionRegistry } from './registry.ts';

/** Split on `,` without trimming, as the reference does; absent means one empty name. */
const namesOf = (q: string | undefined) => (q === undefined ? [''] : q.split(','));

/** `GET /api/v3/session` and `GET /api/v3/session/active` (reference 4.11); unknown names answer empty. */
export function sessionRoutes(http: HttpScope, registry: SessionRegistry): void {
  http.get('/api/v3/session', {
    schema: {
      summary: 'Summary of active and past sessions per collector', tags: ['v16.7.2'],
      querystring: CollectorsQuery, response: { 200: SessionsSummarySchema },
    },
  }, async (req) => {
    const out: Record<string, SessionSummary> = {};
    for (const name of namesOf(req.query.collectors)) out[name] = registry.summary(name);
    return out;
  });
  http.get('/api/v3/session/active', {
    schema: {
      summary: 'Active sessions per collector', tags: ['v16.7.2'],
      querystring: CollectorsQuery, response: { 200: SessionsActiveSchema },
    },
  }, async (req) => {
    const out: Record<string, SessionView[]> = {};
    for (const name of namesOf(req.query.collectors)) out[name] = registry.get(name)?.active() ?? [];
    return out;
  });
}

