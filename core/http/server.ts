import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ApiError, fileDoorMiss, httpHooksRef, isStreamedBody, normalizeIp, type HttpScope } from '../../sdk/index.ts';
import type { RouteAccess } from '../../sdk/http.ts';
import type { ApiConfig } from '../../sdk/config/sections-a.ts';
import type { HookRegistry } from '../kernel/hook-registry.ts';
import { FrontDoorAccess } from './access.ts';
import { errorHandler, sendError, toApiError } from './errors.ts';
import { limitJsonDepth } from './json-depth.ts';
import { installLenientDecoding } from './lenient-body.ts';
import { drainUnreadBodies } from './unread-body.ts';
import type { SerializerCache } from './serializer-cache.ts';
import { LazyValidators } from './lazy-validators.ts';
import { BodyDigests } from './body-digest.ts';
import { BodyDeadlines } from './body-deadlines.ts';
import { ConnectionCap, answerClientError, connectionSlots, serverOptions, type ListenerBounds } from './listener-bounds.ts';
import { checkHeadersWhileConnected } from './header-check.ts';
import { LARGE_BODY_BYTES, collectAfterLargeBody } from '../reload-memory.ts';
import type { KeptListener } from './kept-listener.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The root fastify instance: Error bodies for every failure, 404 for unknown routes, and the
 * front door every route passes (routes are protected unless they say otherwise): the client
 * address, the IP lists (a core tap on `authorize`, first of all, so plugins that delegate to
 * the hook get them too), authentication by whoever taps `authorize`, then `api.read_only`.
 */
const deadlinesByApp = new WeakMap<object, BodyDeadlines>();
const validatorsByApp = new WeakMap<object, LazyValidators>();

/** The app's request validators (compiled as routes first validate; see lazy-validators.ts). */
export function validatorsOf(app: HttpScope): LazyValidators | undefined {
  return validatorsByApp.get(app);
}

/** The body deadlines of an app's HTTP listener (the file door tracks the uploads it takes). */
export function bodyDeadlinesOf(app: HttpScope): BodyDeadlines {
  const d = deadlinesByApp.get(app);
  if (!d) throw new Error('no body deadlines: not an app of createServer');
  return d;
}

export function createServer(opts: {
  log: Logger; bodyLimit: number; hooks: HookRegistry; api: Pick<ApiConfig, 'read_only' | 'access'>;
  /** The serving threads' per-boot key (see threads/peer-header.ts); none without threads. */
  threadKey?: Buffer;
  /** Response serializers compiled by an earlier app of this process (see serializer-cache.ts). */
  serializers?: SerializerCache;
  /** `http.*` bounds of the listener (listener-bounds.ts). */
  bounds: ListenerBounds;
  /** The service's per-address connection counts, shared with the serving threads (a fresh set without). */
  slots?: Int32Array;
  /** The service's API listener kept across reloads (kept-listener.ts); without it fastify makes its own server. */
  listener?: KeptListener;
}): HttpScope {
  const validators = new LazyValidators();
  const app = fastifyFor(opts, validators);
  limitJsonDepth(app as unknown as FastifyInstance);
  new ConnectionCap(opts.slots ?? connectionSlots(), opts.bounds).attach(app.server);
  // a kept listener does this once, for every app it carries
  if (!opts.listener) checkHeadersWhileConnected(app.server);
  const deadlines = new BodyDeadlines(opts.bounds.bodyTimeoutMs, isStreamedBody);
  deadlinesByApp.set(app, deadlines);
  validatorsByApp.set(app, validators);
  // first of all hooks: a body's clock runs from its headers, whatever the route does meanwhile
  app.addHook('onRequest', (request, reply, done) => {
    deadlines.track(request.raw, reply.raw);
    done();
  });
  app.addHook('onClose', (_app, done) => {
    deadlines.close();
    done();
  });

  app.setErrorHandler(errorHandler(opts.log));
  // refusals sent before the body was read (401, 403, 413, 507) must reach the client
  drainUnreadBodies(app);
  app.setNotFoundHandler((request, reply) => {
    // a file the door found missing, left to the router for a cluster node to proxy: nobody did
    const miss = fileDoorMiss(request.raw);
    return sendError(reply, miss === undefined ? new ApiError(404, 'Not Found', ['Not Found'], 'ROUTE_NOT_FOUND')
      : new ApiError(404, 'File not found', [miss.path], 'FS_NOT_FOUND'));
  });

  installLenientDecoding(app);

  installAccess(app, opts);
  app.addHook('onResponse', async (request, reply) => {
    if (Number(request.headers['content-length']) >= LARGE_BODY_BYTES && /json/i.test(request.headers['content-type'] ?? '')) collectAfterLargeBody();
    // the URL cut short: a client must not make every logged line as long as its headers allow
    if (reply.statusCode >= 500) request.log.warn({ method: request.method, url: request.url.slice(0, 256), status: reply.statusCode }, 'request failed');
  });
  return app;
}

/** The fastify instance with the service's options (validators, serializers, bounds, error answers). */
function fastifyFor(opts: Parameters<typeof createServer>[0], validators: LazyValidators): HttpScope {
  return Fastify({
    // request lines are logged at info by fastify; the HTTP component logs warnings and up
    loggerInstance: opts.log.child({ component: 'HTTP' }, { level: opts.log.level === 'debug' ? 'debug' : 'warn' }),
    bodyLimit: opts.bodyLimit,
    routerOptions: { maxParamLength: 4096 },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true } },
    schemaController: { compilersFactory: {
      buildValidator: validators.buildValidator,
      ...(opts.serializers ? { buildSerializer: opts.serializers.buildSerializer } : {}),
    } },
    forceCloseConnections: true,
    // the service's kept listener: fastify never binds or closes it (the service and the listener do)
    ...(opts.listener ? { serverFactory: opts.listener.factory } : {}),
    // header size and timeout from `http.*` (the reference allows 1 MiB and 10 s); bodies are bounded
    // by BodyDeadlines below, since node's requestTimeout would cut long uploads and live ingest
    http: serverOptions(opts.bounds),
    // 431, 408 and 400 from node's parser get the Error body too
    clientErrorHandler: answerClientError,
    // a malformed URL (`%zz`) gets the Error body like every other failure
    frameworkErrors: (err, _req, reply) => { sendError(reply, toApiError(err)); },
  }).withTypeProvider() as unknown as HttpScope;
}

/** The front door's access checks: client address (peer taps, proxies), authorization, read-only, forwarding. */
function installAccess(app: HttpScope, opts: Parameters<typeof createServer>[0]): void {
  const access = new FrontDoorAccess(opts.api, opts.threadKey, (peer) => opts.log.warn({ peer },
    'X-Real-IP / X-Forwarded-For from a local peer ignored: it is not in api.access.trusted_proxies (add it when a reverse proxy runs on this host)'));
  app.decorateRequest('clientAddress', undefined);
  const http = opts.hooks.get(httpHooksRef);
  // a peer tap whose signature covers the body: the body read must be that one (body-digest.ts)
  const digests = new BodyDigests();
  digests.install(app as unknown as FastifyInstance);
  // tapped before any plugin mounts, so it runs first and no plugin can skip it
  http.authorize.tapPromise('core', async (input) => access.checkAddress(input.request, input.access));
  app.addHook('onRequest', async (request, reply) => {
    if (http.peer.taps.length) {
      const vouched = http.peer.call(request);
      if (typeof vouched === 'string') request.clientAddress = normalizeIp(vouched);
      else if (vouched) {
        request.clientAddress = normalizeIp(vouched.address);
        if (vouched.bodySha256) digests.expect(request, vouched.bodySha256);
      }
    }
    access.address(request);
    const path = request.url;
    const api = path === '/api' || path.startsWith('/api/') || path.startsWith('/api?');
    const declared = request.is404 ? undefined : request.routeOptions.config.access;
    const kind: RouteAccess = declared ?? (request.is404 && !api ? 'public' : 'protected');
    if (kind !== 'public') {
      const mutating = (request.is404 ? undefined : request.routeOptions.config.mutates) ?? MUTATING.has(request.method);
      const denied = await http.authorize.promise({ request, access: kind, mutating, api })
        ?? access.checkReadOnly(request, kind, mutating);
      if (denied) throw denied;
    }
    // no taps (a single node): no promise, no cost on the file hot path
    if (http.forward.taps.length && await http.forward.promise({ request, reply, access: kind, api })) return reply;
    return undefined;
  });
}
