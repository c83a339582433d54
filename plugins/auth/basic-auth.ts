import type { FastifyRequest } from 'fastify';
import {
  addressKey, basicCredentialsMatch, parseBasicAuthorization, type BasicAuthService, type BasicClient, type BasicCredentials,
} from '../../sdk/index.ts';
import { authErrors } from './errors.ts';
import type { LoginThrottle } from './throttle.ts';
import type { IamAccess } from '../iam/api.ts';

/**
 * HTTP Basic auth (reference 3.7) for the filesystem plugins: `Authorization: Basic
 * base64(user:pass)`, scheme matched case-insensitively. Wrong or missing credentials are 401 with
 * `WWW-Authenticate`; a credential that is not base64 is 400. `check` slows wrong credentials per
 * client address as the login is slowed (its own throttle, same settings); a request without
 * credentials is the first step of the Basic challenge (ffmpeg sends its credential only after
 * the 401) and a malformed one guesses nothing: both are answered at once and not counted.
 */
export class BasicAuth implements BasicAuthService {
  readonly #p: { throttle: LoginThrottle; iam?: IamAccess | undefined };

  /** `iam`: with the iam plugin, a user's Basic password (`auth.services.basic`) where its `fs` policies allow the write. */
  constructor(p: { throttle: LoginThrottle; iam?: IamAccess | undefined }) {
    this.#p = p;
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
    const out = await this.#p.throttle.run(addressKey(client.address), async () => {
      if (basicCredentialsMatch(given, creds)) return { ok: true as const, value: undefined };
      const iam = this.#p.iam;
      const user = iam && client.method && client.path !== undefined ? iam.basicKey(given.username, given.password, { method: client.method, path: client.path }) : undefined;
      // a user's right password for a write its policies do not allow: no failure to slow, a 403
      if (user?.allowed) return { ok: true as const, value: undefined };
      if (user) return { ok: true as const, value: authErrors.basicForbidden(user.reason) };
      return { ok: false as const, error: authErrors.basicUnauthorized() };
    }, authErrors.tooManyBasicAttempts);
    if (!out.ok) throw out.error;
    if (out.value) throw out.value;
  }
}
