import type { FastifyRequest } from 'fastify';
import { basicCredentialsMatch, parseBasicAuthorization, type BasicAuthService, type BasicCredentials } from '../../sdk/index.ts';
import { authErrors } from './errors.ts';

/**
 * HTTP Basic auth (reference 3.7) for the filesystem plugins: `Authorization: Basic
 * base64(user:pass)`, scheme matched case-insensitively. Wrong or missing credentials are 401 with
 * `WWW-Authenticate`; a credential that is not base64 is 400.
 */
export class BasicAuth implements BasicAuthService {
  verify(request: FastifyRequest, creds: BasicCredentials): void {
    const given = parseBasicAuthorization(request.headers.authorization);
    if (given === 'missing') throw authErrors.basicUnauthorized();
    if (given === 'malformed') throw authErrors.basicMalformed();
    if (!basicCredentialsMatch(given, creds)) throw authErrors.basicUnauthorized();
  }
}
