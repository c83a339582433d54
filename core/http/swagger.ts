import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { HttpScope } from '../../sdk/index.ts';
import { API_VERSION } from './front-door.ts';

/**
 * OpenAPI document generated from the route schemas, Swagger UI at `/api/swagger`,
 * the JSON at `/api/swagger/json` (and `/api/swagger/doc.json` as datarhei Core names it), all
 * public; `/api/swagger/index.html` (the reference's page address) redirects to the UI.
 */
export async function registerSwagger(http: HttpScope): Promise<void> {
  http.addHook('onRoute', (route) => {
    if (route.url.startsWith('/api/swagger')) route.config = { ...(route.config ?? {}), access: 'public' };
  });
  await http.register(swagger, {
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
  await http.register(swaggerUi, { routePrefix: '/api/swagger' });
  http.get('/api/swagger/doc.json', { schema: { hide: true } }, async () => http.swagger());
  // the reference's address of the page (echo-swagger); the UI is served at `/api/swagger/`
  http.get('/api/swagger/index.html', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/api/swagger/'));
}
