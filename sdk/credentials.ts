import type { FastifyRequest } from 'fastify';

/*
 * Credentials the core checks through plugins: HTTP Basic (the file door's writes) and the login
 * validators (the login route, About). The core names no provider; whoever does authentication
 * provides these refs.
 */
import { createServiceRef } from './refs.ts';

/** Username and password to check a Basic credential against. */
export interface BasicCredentials {
  username: string;
  password: string;
}

/**
 * HTTP Basic auth as a service, e.g. for writes on `/memfs`: the core's file door checks a public
 * mount's write credential with it; a plugin that does authentication provides it.
 *
 * @example
 * deps: { basicAuth: optional(basicAuthRef) },
 * ctx.http.put('/memfs/*', { config: PUBLIC }, async (req) => {
 *   ctx.deps.basicAuth?.verify(req, { username: 'admin', password: 'secret' });
 * });
 */
export interface BasicAuthService {
  /** Throws ApiError 401 (with WWW-Authenticate) or 400 when the request's credential is refused. */
  verify(request: FastifyRequest, creds: BasicCredentials): void;
  /**
   * Like `verify`, with the login's brute-force backoff per client address: the answer to a wrong
   * credential, and the address's next attempts, wait longer after each failure; beyond a few
   * waiting attempts the address gets 429. Rejects with the ApiError instead of throwing.
   * `client.address` is the address the front door resolved (`clientAddress(request)`). Optional
   * (SDK 1.2): a provider built for 1.1 lacks it; call `verify` then.
   *
   * @example
   * await (basic.check?.({ address: clientAddress(req), authorization: req.headers.authorization }, creds) ?? basic.verify(req, creds));
   */
  check?(client: BasicClient, creds: BasicCredentials): Promise<void>;
}

/** Who presents a Basic credential: the client's address and its `Authorization` header. */
export interface BasicClient {
  address: string;
  authorization: string | undefined;
  /** What the credential is asked for, when the caller says (the file door: the write's method and mount path, `/memfs/live/x.ts`). */
  method?: string | undefined;
  path?: string | undefined;
}

/**
 * The Basic auth service (one provider: the plugin that does authentication; the core's file door uses it).
 *
 * @example
 * deps: { basicAuth: optional(basicAuthRef) }
 */
export const basicAuthRef = createServiceRef<BasicAuthService>('auth.basic');

/** What a login validator says about a login request it recognises. */
export type LoginVerdict =
  /** Accepted: the service issues its own tokens for `subject`. */
  | { subject: string }
  /** Recognised but refused; `reason` ends up in the 401 details. */
  | { reason: string };

/**
 * One way to log in at `POST /api/login`, besides the local username and password (which the
 * login route checks itself). The login asks every validator, and About lists their names; a validator that does not
 * recognise the request (e.g. no token of its issuer) returns `undefined`.
 *
 * @example
 * ctx.provide(loginValidatorsRef, {
 *   name: 'vendor-sso',
 *   async check(request) {
 *     const key = request.headers['x-sso-key'];
 *     if (typeof key !== 'string') return undefined;
 *     return key === 'letmein' ? { subject: 'sso-user' } : { reason: 'unknown key' };
 *   },
 * });
 */
export interface LoginValidator {
  /** Short description for logs, e.g. `auth0 domain=example.eu.auth0.com`. */
  readonly name: string;
  check(request: FastifyRequest): Promise<LoginVerdict | undefined>;
}

/**
 * Login validators (many providers: one per identity-provider tenant, vendor SSO, ...); consumed by the login route and About's `auths`.
 *
 * @example
 * provides: [loginValidatorsRef], setup(ctx) { ctx.provide(loginValidatorsRef, myValidator); }
 */
export const loginValidatorsRef = createServiceRef<LoginValidator, true>('auth.login-validators', { multiple: true });
