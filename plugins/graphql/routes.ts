import { Type, type HttpScope } from '../../sdk/index.ts';
import { PLAYGROUND_HTML } from './playground.ts';
import type { GraphEngine } from './engine.ts';
import type { PersistedQueries } from './persisted.ts';
import type { CacheTrace, ResultCache } from './result-cache.ts';

const TAGS = ['graph'];
const JSON_TYPE = 'application/json; charset=utf-8';

/** `GraphQuery` (interface): unknown fields are ignored; `query` may be left out for a persisted one. */
export const GraphQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 100_000 })),
  variables: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  operationName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  extensions: Type.Optional(Type.Object({
    persistedQuery: Type.Optional(Type.Object({ version: Type.Optional(Type.Unknown()), sha256Hash: Type.Optional(Type.Unknown()) })),
  })),
});

/** `GraphResponse` (interface): `errors` only when there are some. */
export const GraphResponse = Type.Object({
  data: Type.Unknown(),
  errors: Type.Optional(Type.Array(Type.Unknown())),
});

/** A query, a document or variables refused before anything ran (mercurius' validation error). */
const refused = (err: unknown): unknown[] | undefined => {
  const errors = (err as { errors?: unknown }).errors;
  return Array.isArray(errors) ? errors : undefined;
};

/** What the query route keeps between requests. */
export interface GraphRouteState {
  bodyLimit: number;
  cache: ResultCache;
  persisted: PersistedQueries;
  /** The engine, started by the first query (engine.ts). */
  engine: () => Promise<GraphEngine>;
  /** Whether answers to this caller may differ from others' (an IAM user's: guard.ts): never kept. */
  personal?: (auth: { user: string; via: string } | undefined) => boolean;
}

/**
 * `POST /api/graph/query` and `GET /api/graph` (interface; reference 4.15), both behind the API's
 * credential and IP lists like /api/v3. Only POST runs queries. A query refused before running
 * (syntax, validation, depth, cost, bad variables) is 400 with `errors`, as the interface says
 * (the reference's original answered 422); a field that fails is 200 with `data` and `errors`.
 */
export function graphRoutes(http: HttpScope, { bodyLimit, cache, persisted, engine, personal = () => false }: GraphRouteState): void {
  http.post('/api/graph/query', {
    // a query, even a mutation ping changes nothing: allowed with api.read_only
    config: { mutates: false },
    bodyLimit,
    // a body that is JSON but no GraphQuery gets the GraphResponse 400 too (undecodable JSON: Error body)
    attachValidation: true,
    schema: {
      summary: 'Run a GraphQL query', tags: TAGS, body: GraphQuery,
      response: { 200: GraphResponse, 400: Type.Unknown({ description: 'GraphResponse with errors (undecodable JSON: the Error body)' }) },
    },
  }, async (req, reply) => {
    if (req.validationError) {
      reply.code(400);
      return { data: null, errors: [{ message: `invalid GraphQuery: ${req.validationError.message}` }] };
    }
    const { variables, operationName } = req.body;
    const resolved = persisted.resolve(req.body.query, req.body.extensions?.persistedQuery);
    // the protocol's answer to an unknown hash is a 200 the client reacts to by sending the query
    if ('error' in resolved) {
      return reply.code(resolved.error.message === 'PersistedQueryNotFound' ? 200 : 400).send({ data: null, errors: [resolved.error] });
    }
    const { query } = resolved;
    // answers depend on who asks only for an IAM user's token (its policies filter them): never
    // kept then; for everyone else the credential only decides whether one may ask
    const own = personal(req.auth);
    const key = `${operationName ?? ''}\0${JSON.stringify(variables ?? null)}\0${query}`;
    const kept = own ? undefined : cache.get(key);
    if (kept !== undefined) return reply.code(200).type(JSON_TYPE).send(kept);
    const graph = await engine();
    try {
      const trace: CacheTrace = { deps: [], untracked: false };
      const result = await graph.run(query, { auth: req.auth, trace, reply }, variables ?? undefined, operationName ?? undefined);
      const body = JSON.stringify(result);
      if (!result.errors && !own) cache.set(key, trace, body);
      return reply.code(200).type(JSON_TYPE).send(body);
    } catch (err) {
      const errors = refused(err);
      if (!errors) throw err;
      reply.code(400);
      return { data: null, errors: errors.map(graph.errorJson) };
    }
  });

  http.get('/api/graph', {
    schema: { summary: 'GraphQL playground page', tags: TAGS },
  }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(PLAYGROUND_HTML));
}
