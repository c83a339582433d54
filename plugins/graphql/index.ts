import { aboutRef, appLogRef, definePlugin, httpHooksRef, optional, processesRef } from '../../sdk/index.ts';
import { graphqlSchemaRef } from './api.ts';
import { iamAccessRef } from '../iam/api.ts';
import { metricsQueryRef } from '../metrics/api.ts';
import { playoutRef } from '../playout/api.ts';

/**
 * The GraphQL API of reference 15: `POST /api/graph/query` and the page at `GET /api/graph`,
 * answered by mercurius over a schema composed at the first query from the base, the reference's fields
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
    iam: optional(iamAccessRef),
  },
  async setup(ctx) {
    const { contributions, processes, about, log, metrics, playout, iam } = ctx.deps;
    // the routes load only here (the core reads every built-in's definition); mercurius and graphql at the first query
    const [{ mountGraphql }, { fieldGuard }] = await Promise.all([import('./mount.ts'), import('./guard.ts')]);
    // an IAM user sees what the fields' REST twins would show it (guard.ts); the list as the core's
    const { processAccess: hook, sees } = ctx.hooks.get(httpHooksRef);
    const guard = fieldGuard(iam, processes, (reply, q) => (hook.isUsed() ? hook.call(reply.request, q) : undefined),
      (reply, about) => (sees.isUsed() ? sees.call(reply.request, about) : undefined));
    await mountGraphql(ctx.http, { processes, about, log, metrics, playout, guard }, contributions);
  },
});
