import type { FastifyRequest } from 'fastify';
import {
  addressKey, basicCredentialsMatch, bearerTokens, clientAddress, isLoopback, type ApiAuthConfig, type ApiError, type AuthorizeInput, type LoginValidator,
  type LoginVerdict, type RequestAuth,
} from '../../sdk/index.ts';
import { localLogin } from './credentials.ts';
import { authErrors } from './errors.ts';
import { LoginThrottle, type Attempt, type ThrottleOptions } from './throttle.ts';
import { TokenIssuer } from './tokens.ts';
import { IAM_SUBJECT, type IamAccess } from '../iam/api.ts';

export interface AuthServiceOptions {
  auth: ApiAuthConfig;
  validators: readonly LoginValidator[];
  throttle: ThrottleOptions;
  /** IAM's decisions, when the iam plugin runs (its users' tokens open nothing without it). */
  iam?: IamAccess | undefined;
}

export interface LoginTokens {
  access_token: string;
  refresh_token: string;
}

/**
 * Who is calling: bearer tokens and `disable_localhost`; and the local login with its
 * brute-force slowing. The IP lists and `api.read_only` are the core's front door's, which
 * also resolves the client address (`clientAddress`). No fastify routes here; `routes.ts` and
 * the authorize tap in `index.ts` call in.
 */
export class AuthService {
  readonly tokens: TokenIssuer;
  readonly throttle: LoginThrottle;
  readonly #opts: AuthServiceOptions;

  constructor(opts: AuthServiceOptions) {
    this.#opts = opts;
    this.tokens = new TokenIssuer({ username: opts.auth.username, password: opts.auth.password, secret: opts.auth.jwt.secret });
    this.throttle = new LoginThrottle(opts.throttle);
  }

  /** The kernel's authorize hook: an ApiError refuses the request. */
  async authorize(input: AuthorizeInput): Promise<ApiError | undefined> {
    const { request, access } = input;
    if (access === 'network' || access === 'public') return undefined;
    // a CORS preflight never carries credentials (browsers strip them); the real request will
    if (request.method === 'OPTIONS') return undefined;
    const { who, loginMs } = await this.#caller(request);
    // an IAM user's token: IAM decides (without the iam plugin it is no token at all)
    if (who?.user.startsWith(IAM_SUBJECT)) {
      const iam = this.#opts.iam;
      if (!iam) return access === 'optional' ? undefined : authErrors.invalidToken();
      const refused = iam.tokenRefusal(who.user, loginMs) ?? iam.authorizeApi(input, who.user);
      if (refused) return access === 'optional' ? undefined : refused;
    }
    if (who) request.auth = who;
    if (access === 'optional') return undefined;
    return who ? undefined : authErrors.invalidToken();
  }

  /** The caller, if known: auth off, a valid access token, or a local client under `disable_localhost`. */
  async identify(request: FastifyRequest, ip = clientAddress(request)): Promise<RequestAuth | undefined> {
    return (await this.#caller(request, ip)).who;
  }

  /** The caller and, for a token, when its login began. */
  async #caller(request: FastifyRequest, ip = clientAddress(request)): Promise<{ who?: RequestAuth; loginMs: number }> {
    const auth = this.#opts.auth;
    if (!auth.enable) return { who: { user: '', via: 'disabled' }, loginMs: 0 };
    for (const token of bearerTokens(request)) {
      const held = await this.tokens.verify(token, 'access');
      if (held) return { who: { user: held.subject, via: 'jwt', login: held.loginMs }, loginMs: held.loginMs };
    }
    // a loopback peer that names another client (a reverse proxy not in api.access.trusted_proxies)
    // speaks for someone else: never the local exemption
    const forwarded = request.headers['x-real-ip'] !== undefined || request.headers['x-forwarded-for'] !== undefined;
    if (auth.disable_localhost && isLoopback(ip) && !forwarded) return { who: { user: auth.username, via: 'localhost' }, loginMs: 0 };
    return { loginMs: 0 };
  }

  /**
   * `POST /api/login`: the local validator, then every contributed one. Failures (refused or not
   * recognised) are slowed per client address, IPv6 clients per /64 (one subscriber holds a
   * whole /64 and could otherwise rotate through it).
   */
  async login(request: FastifyRequest): Promise<LoginTokens> {
    const out = await this.throttle.run(addressKey(clientAddress(request)), async (): Promise<Attempt<LoginTokens>> => {
      // taken before the password is checked: a login that checked a password changed meanwhile is older than the change
      const loginMs = Date.now();
      const verdicts = await this.#verdicts(request);
      const accepted = verdicts.find((v): v is { subject: string } => 'subject' in v);
      if (accepted) {
        return {
          ok: true,
          value: {
            access_token: await this.tokens.issue(accepted.subject, 'access', loginMs),
            refresh_token: await this.tokens.issue(accepted.subject, 'refresh', loginMs),
          },
        };
      }
      const refused = verdicts.find((v): v is { reason: string } => 'reason' in v);
      return { ok: false, error: refused ? authErrors.invalidCredentials(refused.reason) : authErrors.missingCredentials() };
    }, authErrors.tooManyAttempts);
    if (!out.ok) throw out.error;
    return out.value;
  }

  /**
   * `GET /api/login/refresh`: a new access token for the subject of a valid refresh token, of the
   * same login; an IAM user's only while its tokens stand (not deleted, login on, no change since).
   */
  async refresh(request: FastifyRequest): Promise<{ access_token: string }> {
    for (const token of bearerTokens(request)) {
      const held = await this.tokens.verify(token, 'refresh');
      if (!held) continue;
      if (held.subject.startsWith(IAM_SUBJECT)) {
        const refused = this.#opts.iam ? this.#opts.iam.tokenRefusal(held.subject, held.loginMs) : authErrors.invalidToken();
        if (refused) throw refused;
      }
      return { access_token: await this.tokens.issue(held.subject, 'access', held.loginMs) };
    }
    throw authErrors.invalidToken();
  }

  close(): void {
    this.throttle.close();
  }

  async #verdicts(request: FastifyRequest): Promise<LoginVerdict[]> {
    const out: LoginVerdict[] = [];
    const local = localLogin(request.body);
    if (local) {
      const auth = this.#opts.auth;
      out.push(basicCredentialsMatch(local, auth) ? { subject: auth.username } : { reason: 'invalid username or password' });
    }
    const others = await Promise.all(this.#opts.validators.map(async (v) => {
      try {
        return await v.check(request);
      } catch (err) {
        return { reason: `${v.name}: ${(err as Error).message}` };
      }
    }));
    for (const v of others) if (v) out.push(v);
    return out;
  }
}
