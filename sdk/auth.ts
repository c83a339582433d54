import type { FastifyRequest } from 'fastify';
import { createServiceRef } from './refs.ts';

/** Username and password to check a Basic credential against. */
export interface BasicCredentials {
  username: string;
  password: string;
}

/**
 * HTTP Basic auth as a service (provided by the `auth` plugin), e.g. for writes on `/memfs`.
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
}

export const basicAuthRef = createServiceRef<BasicAuthService>('auth.basic');
