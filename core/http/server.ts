import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, httpHooksRef, type HttpScope, type RouteAccess } from '../../sdk/index.ts';
import type { HookRegistry } from '../kernel/hook-registry.ts';
import { errorHandler, sendError, toApiError } from './errors.ts';
import { limitJsonDepth } from './json-depth.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The root fastify instance: Error bodies for every failure, 404 for unknown routes, and the
 * authorize hook that auth plugins tap (routes are protected unless they say otherwise).
 */
export function createServer(opts: { log: Logger; bodyLimit: number; hooks: HookRegistry }): HttpScope {
  const app = Fastify({
    // request lines are logged at info by fastify; the HTTP component logs warnings and up
    loggerInstance: opts.log.child({ component: 'HTTP' }, { level: opts.log.level === 'debug' ? 'debug' : 'warn' }),
    bodyLimit: opts.bodyLimit,
    routerOptions: { maxParamLength: 4096 },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true } },
    forceCloseConnections: true,
    // node's default (16 KiB) answers 431 before fastify sees the request; the reference allows 1 MiB,
    // so an oversized credential gets the auth plugin's 401 Error body instead
    // headersTimeout: a client has 10 s to send its headers (the reference's read-header timeout),
    // checked every 2 s; the body and the response (uploads, long streams) are not limited here
    http: { maxHeaderSize: 1024 * 1024, headersTimeout: 10_000, connectionsCheckingInterval: 2_000 },
    // a malformed URL (`%zz`) gets the Error body like every other failure
    frameworkErrors: (err, _req, reply) => { sendError(reply, toApiError(err)); },
  }).withTypeProvider() as unknown as HttpScope;
  limitJsonDepth(app as unknown as FastifyInstance);

  app.setErrorHandler(errorHandler(opts.log));
  app.setNotFoundHandler((_req, reply) => sendError(reply, new ApiError(404, 'Not Found', ['Not Found'], 'ROUTE_NOT_FOUND')));

  const http = opts.hooks.get(httpHooksRef);
  app.addHook('onRequest', async (request) => {
    const path = request.url;
    const api = path === '/api' || path.startsWith('/api/') || path.startsWith('/api?');
    const declared = request.is404 ? undefined : request.routeOptions.config.access;
    const access: RouteAccess = declared ?? (request.is404 && !api ? 'public' : 'protected');
    if (access === 'public') return;
    const mutating = (request.is404 ? undefined : request.routeOptions.config.mutates) ?? MUTATING.has(request.method);
    const denied = await http.authorize.promise({ request, access, mutating, api });
    if (denied) throw denied;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode >= 500) request.log.warn({ method: request.method, url: request.url, status: reply.statusCode }, 'request failed');
  });
  return app;
}
