import mercurius from 'mercurius';
import type { GraphqlContribution, HttpScope } from '../../sdk/index.ts';
import { composeSchema } from './compose.ts';
import { errorJson } from './errors.ts';
import { referenceFields, type FieldDeps } from './fields.ts';
import { DEFAULT_LIMITS, limitsRule } from './limits.ts';
import { PersistedQueries } from './persisted.ts';
import { ResultCache } from './result-cache.ts';
import { graphRoutes } from './routes.ts';

/** Queries are text; a bigger body is refused (413) before it is read. */
const BODY_LIMIT = 256 * 1024;
/** Answers kept while their processes are unchanged (result-cache.ts), at most this many bytes. */
const CACHE_BYTES = 32 * 1024 * 1024;
/** Automatic persisted queries kept (persisted.ts). */
const PERSISTED_MAX = 1000;

/**
 * Composes the schema and mounts mercurius with the routes. Imported by `setup` only: the core
 * reads every built-in's definition for the configuration, and mercurius, graphql and ws must not
 * load in a deployment that does not mount this plugin.
 */
export async function mountGraphql(http: HttpScope, services: FieldDeps, contributions: readonly GraphqlContribution[]): Promise<void> {
  // the plugin graph mounts every provider of graphqlSchemaRef before this plugin
  const composed = composeSchema([...referenceFields(services), ...contributions]);
  await http.register(mercurius, {
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
  graphRoutes(http, { bodyLimit: BODY_LIMIT, cache: new ResultCache(CACHE_BYTES), persisted: new PersistedQueries(PERSISTED_MAX) });
}
