import type { FastifyRequest } from 'fastify';
import {
  addressKey, basicCredentialsMatch, parseBasicAuthorization, type BasicAuthService, type BasicClient, type BasicCredentials,
} from '../../sdk/index.ts';
import { authErrors } from './errors.ts';
import type { LoginThrottle } from './throttle.ts';

/**
 * HTTP Basic auth (reference 3.7) for the filesystem plugins: `Authorization: Basic
 * base64(user:pass)`, scheme matched case-insensitively. Wrong or missing credentials are 401 with
 * `WWW-Authenticate`; a credential that is not base64 is 400. `check` slows wrong credentials per
 * client address as the login is slowed (its own throttle, same settings); a request without
 * credentials is the first step of the Basic challenge (ffmpeg sends its credential only after
 * the 401) and a malformed one guesses nothing: both are answered at once and not counted.
 */
export class BasicAuth implements BasicAuthService {
  readonly #throttle: LoginThrottle;

  constructor(throttle: LoginThrottle) {
    this.#throttle = throttle;
  }

  verify(request: FastifyRequest, creds: BasicCredentials): void {
    const given = parseBasicAuthorization(request.headers.authorization);
    if (given === 'missing') throw authErrors.basicUnauthorized();
    if (given === 'malformed') throw authErrors.basicMalformed();
    if (!basicCredentialsMatch(given, creds)) throw authErrors.basicUnauthorized();
  }

  async check(client: BasicClient, creds: BasicCredentials): Promise<void> {
    const given = parseBasicAuthorization(client.authorization);
    if (given === 'missing') throw authErrors.basicUnauthorized();
    if (given === 'malformed') throw authErrors.basicMalformed();
    // the right credential waits its turn too: otherwise a guess answered at once would be a hit
    const out = await this.#throttle.run(addressKey(client.address), async () => (basicCredentialsMatch(given, creds)
      ? { ok: true as const, value: undefined }
      : { ok: false as const, error: authErrors.basicUnauthorized() }), authErrors.tooManyBasicAttempts);
    if (!out.ok) throw out.error;
  }
}
