import type { HttpScope } from '../../sdk/index.ts';
import type { GraphqlContribution } from './api.ts';
import type { GraphEngine } from './engine.ts';
import type { FieldDeps } from './fields.ts';
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
 * Mounts the routes. Imported by `setup` only (the core reads every built-in's definition for the
 * configuration), and mercurius and graphql load later still: at the first query (engine.ts), so
 * a service whose GraphQL API nobody calls does not hold them. The schema is composed then, from
 * the contributions every provider of graphqlSchemaRef made before this plugin was mounted; a
 * vendor's contribution is composed once at boot too, so one that does not compose stops the boot.
 */
export async function mountGraphql(http: HttpScope, services: FieldDeps, contributions: readonly GraphqlContribution[]): Promise<void> {
  // no built-in contributes (the reference's fields are this plugin's own); a vendor's is checked at boot
  if (contributions.length > 0) {
    const [{ composeSchema }, { referenceFields }] = await Promise.all([import('./compose.ts'), import('./fields.ts')]);
    composeSchema([...referenceFields(services), ...contributions], services.guard);
  }
  let engine: Promise<GraphEngine> | undefined;
  const load = (): Promise<GraphEngine> => {
    engine ??= import('./engine.ts').then((m) => m.startEngine(services, contributions)).catch((err: unknown) => {
      engine = undefined; // a failed start is tried again by the next query
      throw err;
    });
    return engine;
  };
  http.addHook('onClose', async () => { if (engine) await (await engine.catch(() => undefined))?.close(); });
  graphRoutes(http, {
    bodyLimit: BODY_LIMIT, cache: new ResultCache(CACHE_BYTES), persisted: new PersistedQueries(PERSISTED_MAX), engine: load,
    personal: (auth) => services.guard?.personal(auth) ?? false,
  });
}
