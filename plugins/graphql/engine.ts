import { createRequire } from 'node:module';
import Fastify from 'fastify';
import mercurius from 'mercurius';
import type { RequestAuth } from '../../sdk/index.ts';
import type { GraphqlContribution } from './api.ts';
import { composeSchema } from './compose.ts';
import { errorJson } from './errors.ts';
import { referenceFields, type FieldDeps } from './fields.ts';
import { DEFAULT_LIMITS, limitsRule } from './limits.ts';
import type { CacheTrace } from './result-cache.ts';

/** mercurius' own keys: its loader factory on the instance, a request's loaders on the reply (what `reply.graphql` sets up). */
const { kFactory, kLoaders } = createRequire(import.meta.url)('mercurius/lib/symbols.js') as { kFactory: symbol; kLoaders: symbol };
type LoaderFactory = { create(context: object): unknown };

/** What a query runs with: the caller's credential, the cache's trace and the route's reply (mercurius' `context.reply`). */
export interface QueryContext { auth?: RequestAuth; trace: CacheTrace; reply: object }

/** The engine the query route runs queries on, made at the first query. */
export interface GraphEngine {
  run(source: string, context: QueryContext, variables?: Record<string, unknown>, operationName?: string): Promise<{ data: unknown; errors?: unknown[] }>;
  /** One error of a response as JSON (errors.ts: it needs graphql's classes, so it comes with the engine). */
  errorJson(e: unknown): Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * Composes the schema and starts mercurius on a private fastify instance with no routes and no
 * listener (issue 29: mercurius and graphql, about 8 MB, load at the first query, not at boot).
 * The service's own routes (routes.ts) stay where they are and call `run`; this is what
 * mercurius' `reply.graphql` does, with the route's reply passed in the context as it would be.
 */
export async function startEngine(services: FieldDeps, contributions: readonly GraphqlContribution[]): Promise<GraphEngine> {
  const composed = composeSchema([...referenceFields(services), ...contributions], services.guard);
  const inner = Fastify({ logger: false });
  await inner.register(mercurius, {
    schema: composed.schema,
    resolvers: composed.resolvers as never,
    loaders: Object.keys(composed.loaders).length ? composed.loaders as never : undefined,
    routes: false,
    graphiql: false,
    // compiled (graphql-jit) from a document's second run: lists of 1,000 processes stay cheap
    jit: 1,
    validationRules: [limitsRule(DEFAULT_LIMITS)],
    errorFormatter: (execution) => ({
      statusCode: 200,
      response: { data: execution.data ?? null, errors: (execution.errors ?? []).map(errorJson) as never },
    }),
  });
  await inner.ready();
  const factory = (inner as unknown as Record<symbol, LoaderFactory | undefined>)[kFactory];
  return {
    run: (source, context, variables, operationName) => {
      // as mercurius' `reply.graphql`: a request's batch loaders live on its reply
      if (factory) (context.reply as Record<symbol, unknown>)[kLoaders] = factory.create(context);
      return inner.graphql(source, context as never, variables, operationName) as Promise<{ data: unknown; errors?: unknown[] }>;
    },
    errorJson,
    close: () => inner.close(),
  };
}
