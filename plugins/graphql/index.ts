import mercurius from 'mercurius';
import {
  aboutRef, appLogRef, definePlugin, graphqlSchemaRef, metricsQueryRef, optional, playoutRef, processesRef,
} from '../../sdk/index.ts';
import { composeSchema } from './compose.ts';
import { errorJson } from './errors.ts';
import { referenceFields } from './fields.ts';
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
 * The GraphQL API of reference 15: `POST /api/graph/query` and the page at `GET /api/graph`,
 * answered by mercurius over a schema composed at boot from the base, the reference's fields
 * (over the processes, about, log, metrics-query and playout services, exactly what the REST
 * routes use) and every plugin's `graphqlSchemaRef` contribution.
 */
export default definePlugin({
  name: 'graphql',
  deps: {
    contributions: graphqlSchemaRef,
    processes: processesRef,
    about: aboutRef,
    log: appLogRef,
    metrics: optional(metricsQueryRef),
    playout: optional(playoutRef),
  },
  async setup(ctx) {
    const { contributions, processes, about, log, metrics, playout } = ctx.deps;
    // the plugin graph mounts every provider of graphqlSchemaRef before this plugin
    const composed = composeSchema([...referenceFields({ processes, about, log, metrics, playout }), ...contributions]);
    await ctx.http.register(mercurius, {
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
    graphRoutes(ctx.http, { bodyLimit: BODY_LIMIT, cache: new ResultCache(CACHE_BYTES), persisted: new PersistedQueries(PERSISTED_MAX) });
  },
});
