import type { HttpScope, TSchema } from '../../sdk/index.ts';
import { CollectorsQuery, SessionsActiveSchema, SessionsSummarySchema } from './schema.ts';
import type { SessionRegistry } from './registry.ts';

/** `{<name>: one(name)}` for `?collectors=`, split on `,` without trimming as the reference does; absent means one empty name. */
function perCollector<T>(q: string | undefined, one: (name: string) => T): Record<string, T> {
  const out: Record<string, T> = {};
  for (const name of q === undefined ? [''] : q.split(',')) out[name] = one(name);
  return out;
}

/** `GET /api/v3/session` and `GET /api/v3/session/active` (reference 4.11); unknown names answer empty. */
export function sessionRoutes(http: HttpScope, registry: SessionRegistry): void {
  const schema = <S extends TSchema>(summary: string, answer: S) =>
    ({ summary, tags: ['v16.7.2'], querystring: CollectorsQuery, response: { 200: answer } });
  http.get('/api/v3/session', { schema: schema('Summary of active and past sessions per collector', SessionsSummarySchema) },
    async (req) => perCollector(req.query.collectors, (name) => registry.summary(name)));
  http.get('/api/v3/session/active', { schema: schema('Active sessions per collector', SessionsActiveSchema) },
    async (req) => perCollector(req.query.collectors, (name) => registry.get(name)?.active() ?? []));
}
