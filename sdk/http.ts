import type {} from '@fastify/swagger';
import type {
  FastifyInstance, FastifyBaseLogger, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression,
  FastifyRequest, FastifyReply,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { createHooksRef, AsyncSeriesBailHook, SyncBailHook } from './hooks.ts';
import type { ApiError } from './errors.ts';
import type { RunUse } from './run-credentials.ts';

/**
 * Who may call a route. `protected` (the default) needs the API credential when auth is on;
 * `optional` authenticates when it can but never refuses (e.g. `GET /api`); `network` needs no
 * credential but obeys the API's IP access lists (e.g. `/metrics`); `public` skips all checks.
 * The core's front door enforces the IP lists and `api.read_only` on every route that is not
 * `public`, whatever plugins are loaded; only the credential is an auth plugin's business.
 */
export type RouteAccess = 'public' | 'protected' | 'optional' | 'network';

/** Who the caller is, once an auth plugin has recognised them. */
export interface RequestAuth {
  user: string;
  /** How: `jwt`, `localhost`, `basic`, `disabled`, ... */
  via: string;
  /** For a token: when its login began (ms; a refresh keeps it). A long-lived answer (an event stream) asks again whether it still stands. */
  login?: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Route access class, read by the core's front door and the authorize hook. Default `protected`. */
    access?: RouteAccess;
    /**
     * Whether the route changes state, for `api.read_only`. Default: by method (POST, PUT, PATCH,
     * DELETE change state). A POST that only queries says `false`; a GET that acts says `true`.
     */
    mutates?: boolean;
  }
  interface FastifyRequest {
    /** Set by the auth plugin's authorize tap. */
    auth?: RequestAuth;
  }
}

/** The encapsulated fastify scope a plugin gets as `ctx.http`, typed for TypeBox schemas. */
export type HttpScope = FastifyInstance<
  RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider
>;

/**
 * Route `config` for a public route.
 *
 * @example
 * ctx.http.get('/ping', { config: PUBLIC }, async () => 'pong');
 */
export const PUBLIC = Object.freeze({ access: 'public' as RouteAccess });
/**
 * Route `config` for a route that authenticates when it can but never refuses.
 *
 * @example
 * ctx.http.get('/api/v3/hello', { config: OPTIONAL_AUTH }, async (req) => ({ user: req.auth?.user ?? null }));
 */
export const OPTIONAL_AUTH = Object.freeze({ access: 'optional' as RouteAccess });
/**
 * Route `config` for a route without credential that still obeys the API's IP access lists.
 *
 * @example
 * ctx.http.get('/metrics', { config: NETWORK }, async () => registry.metrics());
 */
export const NETWORK = Object.freeze({ access: 'network' as RouteAccess });

/** What the kernel knows about a request when it asks who may pass. */
export interface AuthorizeInput {
  request: FastifyRequest;
  access: RouteAccess;
  /** True when the route changes state: its `mutates` config, else by method (POST, PUT, PATCH, DELETE). */
  mutating: boolean;
  /** True when the path is under `/api` (the API tree). */
  api: boolean;
}

/**
 * Hooks of the kernel's HTTP front. `authorize` runs for every request to a non-public route
 * before its handler; the first tap that returns an ApiError refuses the request with it. The
 * core's own tap comes first (the `api.access` IP lists); `api.read_only` is checked after the
 * hook, so a caller without credential learns 401 first. A public catch-all route that passes an
 * `/api/...` path on (disk-fs) calls `authorize.promise` itself and gets the IP lists too.
 *
 * @example
 * ctx.hooks.tap(httpHooksRef, 'authorize', async ({ request, access }) =>
 *   access === 'protected' && !request.headers.authorization ? httpErrors.unauthorized() : undefined);
 */
export const httpHooksRef = createHooksRef('http', () => ({
  authorize: new AsyncSeriesBailHook<[AuthorizeInput], ApiError | undefined>(['input']),
  /**
   * Before anything else of a request: a plugin that forwards requests between nodes vouches for
   * the original client's address (it checks its own signed header, and strips it). The first
   * address returned replaces the TCP peer for the IP lists, the localhost exemption and the
   * login throttle; return nothing for a request that is not yours. A signature that covers the
   * body returns a `PeerVouch` with its digest: the core then refuses the request (403) when the
   * body it reads differs, before the handler runs.
   */
  peer: new SyncBailHook<[FastifyRequest], string | PeerVouch | undefined>(['request']),
  /**
   * Once a request may pass (a public route at once, any other after `authorize` and read-only),
   * before its body is read: a tap that answers it itself (e.g. proxies it to another node,
   * streaming `request.raw`) returns true, and the route's handler does not run. Keep the taps
   * cheap: they see every request, file reads included.
   */
  forward: new AsyncSeriesBailHook<[ForwardInput], true | undefined>(['input']),
  /**
   * Whether the caller of `request` (its `auth`, set by `authorize`) may `action` the process `id`
   * of `domain` ('' for none): false hides the process from the list and refuses a create (403);
   * undefined leaves it to the next tap (none: allowed). The core's process list and create ask
   * it; an access plugin (iam) taps it for its users. Routes of one process are decided by
   * `authorize` on their path.
   */
  processAccess: new SyncBailHook<[FastifyRequest, { id: string; domain: string; action: 'read' | 'write' | 'command' }], boolean | undefined>(['request', 'question']),
  /**
   * Whether the caller of `request` may make a process whose command names `use` at one of the
   * service's listeners (a file it writes or reads there, a stream it publishes or plays: what its
   * run's credential would reach): false refuses the create or update (403); undefined leaves it
   * to the next tap (none: allowed). The core's process create and update ask it for every use;
   * an access plugin (iam) taps it, so a user's process may do only what its user may.
   */
  processUse: new SyncBailHook<[FastifyRequest, RunUse], boolean | undefined>(['request', 'use']),
  /**
   * Whether `maker` (the `request.auth.user` of a process's last create or update, kept with it)
   * may still have its process do `use`: asked again before each start of a run of a process that
   * has a maker (a restart, a reconnect, an order, a schedule, a demand), so a maker's policy
   * removed or the maker deleted stops what it made at the next start. False fails the start
   * (the process's state says why); undefined leaves it to the next tap (none: allowed). An
   * access plugin (iam) taps it as it taps `processUse`. `since`: unix seconds of the process's last
   * create or update (when its maker set it): a user of that name made after it is another user
   * (a name given again), whom the access plugin refuses.
   */
  processUseBy: new SyncBailHook<[string, RunUse, number], boolean | undefined>(['maker', 'use', 'since']),
  /**
   * The paths of the file namespace (`/<mount>/<path>`, as `fs` policies name them; a folder ends in
   * `/`) whose files `maker` (with `since`, as for `processUseBy`) may read and write, for the
   * kernel's rules of its process's children (`list`: a namespace folder's entries now, a folder's
   * with its closing `/`, links left out, for patterns to be matched against): the engine narrows what they reach of the disk
   * filesystem's folder to these (`ChildSpawnOptions.disk`), so a file its command does not name (a
   * playlist's segment, a list's entry) is not read either. Undefined: no narrowing (none taps it,
   * a superuser, a maker no access plugin knows). An access plugin (iam) taps it.
   */
  makerFolders: new SyncBailHook<[string, number, (folder: string) => readonly string[] | undefined], { read: readonly string[]; write: readonly string[] } | undefined>(['maker', 'since', 'list']),
  /**
   * Whether the caller of `request` may replace or remove what a plugin keeps with its maker
   * (`maker`: the `request.auth.user` that made it, undefined when made with none, e.g. by the
   * operator; `since`: unix seconds of when): false refuses (403); undefined leaves it to the next
   * tap (none: allowed). The ladders API asks it before a ladder is replaced or deleted; an access
   * plugin (iam) taps it: its users change only what they made (renamed since: still theirs),
   * its superusers all.
   */
  mayChange: new SyncBailHook<[FastifyRequest, { maker: string | undefined; since: number }], boolean | undefined>(['request', 'made']),
  /**
   * Whether the caller of `request` may see what the service says about a process or a stream
   * (a log line, a metric series, a session naming it; `{}`: the service's own, naming neither):
   * false hides it; undefined leaves it to the next tap (none: seen). The application log, the
   * metrics query and the sessions lists ask it; an access plugin (iam) taps it for its users.
   */
  sees: new SyncBailHook<[FastifyRequest, { process?: string; stream?: string }], boolean | undefined>(['request', 'about']),
}));

/**
 * What a `peer` tap vouches for: the client's address and, for a request with a body, the SHA-256
 * (lowercase hex) the body must have.
 *
 * @example
 * ctx.hooks.tap(httpHooksRef, 'peer', (request) => ({ address: '203.0.113.7', bodySha256: signedDigest }));
 */
export interface PeerVouch {
  address: string;
  bodySha256?: string;
}

/** What `forward` taps see of a request that may pass. */
export interface ForwardInput {
  request: FastifyRequest;
  reply: FastifyReply;
  access: RouteAccess;
  /** True when the path is under `/api`. */
  api: boolean;
}
