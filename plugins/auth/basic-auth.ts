import type { FastifyRequest } from 'fastify';
import type { BasicAuthService, BasicCredentials } from '../../sdk/index.ts';
import { credentialsMatch } from './credentials.ts';
import { authErrors } from './errors.ts';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * HTTP Basic auth (reference 3.7) for the filesystem plugins: `Authorization: Basic
 * base64(user:pass)`, scheme matched case-insensitively. Wrong or missing credentials are 401 with
 * `WWW-Authenticate`; a credential that is not base64 is 400.
 */
export class BasicAuth implements BasicAuthService {
  verify(request: FastifyRequest, creds: BasicCredentials): void {
    const header = request.headers.authorization;
    const m = typeof header === 'string' ? /^basic\s+(\S*)\s*$/i.exec(header) : null;
    if (!m) throw authErrors.basicUnauthorized();
    const encoded = m[1]!;
    if (encoded.length % 4 === 1 || !BASE64.test(encoded)) throw authErrors.basicMalformed();
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const given = colon < 0
      ? { username: decoded, password: '' }
      : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
    if (!credentialsMatch(given, creds)) throw authErrors.basicUnauthorized();
  }
}
