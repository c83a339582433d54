import type { FastifyInstance, RouteOptions } from 'fastify';
import { PUBLIC, type HttpScope } from '../../sdk/index.ts';
import { API_VERSION } from './front-door.ts';

/** Response headers of the docs instance that the service's own reply sets itself. */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding', 'date', 'content-length']);

/** What a route of the API needs to appear in the document: its method, address and schema. */
type Described = Pick<RouteOptions, 'method' | 'url' | 'schema'>;

/**
 * OpenAPI document generated from the route schemas, Swagger UI at `/api/swagger`,
 * the JSON at `/api/swagger/json` (and `/api/swagger/doc.json` as datarhei Core names it), all
 * public; `/api/swagger/index.html` (the reference's page address) answers 200 with the same page
 * as `/api/swagger/` (issue 44.5: a client that opens that exact address without following
 * redirects shows it). The page's files and document are named relative to its address: from
 * `index.html` its files are `./static/...` (the same files) and its document, which the UI's
 * script names as `<page address>/json`, is `/api/swagger/index.html/json`; addresses below
 * `index.html/` are those below `/api/swagger/`.
 *
 * Made at the first view (issue 29: @fastify/swagger, its YAML writer, the UI's static server and
 * file globbing are about 4 MB a service that nobody reads the docs of need not hold): at boot
 * only the routes are noted as they are added; the first request under `/api/swagger` builds a
 * private fastify instance with @fastify/swagger and @fastify/swagger-ui, replays the noted routes
 * into it (schemas only, no validators compiled, never listening) and answers from it.
 */
export async function registerSwagger(http: HttpScope): Promise<void> {
  const routes: Described[] = [];
  http.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/swagger')) route.config = { ...(route.config ?? {}), access: 'public' };
    else routes.push({ method: route.method, url: route.url, schema: route.schema });
  });
  let docs: Promise<FastifyInstance> | undefined;
  const load = (): Promise<FastifyInstance> => {
    docs ??= docsInstance(routes).catch((err: unknown) => { docs = undefined; throw err; });
    return docs;
  };
  http.addHook('onClose', async () => { if (docs) await (await docs.catch(() => undefined))?.close(); });
  const forward = async (req: { method: string; url: string; headers: Record<string, string | string[] | undefined> }, reply: ForwardReply) => {
    const inner = await load();
    const res = await inner.inject({ method: req.method as 'GET', url: pageRelative(req.url), headers: { accept: req.headers.accept ?? '*/*' } });
    for (const [name, value] of Object.entries(res.headers)) {
      if (!HOP_HEADERS.has(name) && value !== undefined) reply.header(name, value);
    }
    const sent = reply.code(res.statusCode);
    return res.rawPayload.length ? sent.send(res.rawPayload) : sent.send();
  };
  http.get('/api/swagger', { config: PUBLIC, schema: { hide: true } }, forward);
  http.get('/api/swagger/*', { config: PUBLIC, schema: { hide: true } }, forward);
  http.get('/api/swagger/doc.json', { config: PUBLIC, schema: { hide: true } }, async () => (await load()).swagger());
  // the reference's address of the page (echo-swagger): the page itself, as at `/api/swagger/`
  http.get('/api/swagger/index.html', { config: PUBLIC, schema: { hide: true } }, forward);
}

/** `/api/swagger/index.html` is the page at `/api/swagger/`, and what is below it is below that. */
function pageRelative(url: string): string {
  return url.replace(/^\/api\/swagger\/index\.html(?:\/|(?=\?|$))/, '/api/swagger/');
}

interface ForwardReply {
  header(name: string, value: unknown): unknown;
  code(status: number): { send(body?: Buffer): unknown };
}

/** The docs: a fastify instance that only describes the API (and serves the UI's files). */
async function docsInstance(routes: readonly Described[]): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('fastify'), import('@fastify/swagger'), import('@fastify/swagger-ui'),
  ]);
  // HEAD routes were noted as the service added them: replaying them makes the same document
  const inner = Fastify({ logger: false, exposeHeadRoutes: false });
  // the schemas only describe here: nothing is validated or serialized by this instance
  inner.setValidatorCompiler(() => () => true);
  inner.setSerializerCompiler(() => (data) => JSON.stringify(data));
  await inner.register(swagger, {
    openapi: {
      info: { title: 'Media process core API', description: 'datarhei Core v16 compatible API', version: API_VERSION },
      components: {
        securitySchemes: {
          ApiKeyAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          BasicAuth: { type: 'http', scheme: 'basic' },
        },
      },
      security: [{ ApiKeyAuth: [] }],
    },
  });
  await inner.register(swaggerUi, { routePrefix: '/api/swagger' });
  await inner.register(async (scope) => {
    const noop = async () => null;
    for (const r of routes) scope.route({ method: r.method, url: r.url, schema: r.schema, handler: noop });
  });
  await inner.ready();
  return inner;
}
