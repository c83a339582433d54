import { ConfigErrorList, Type, type ApiAuthConfig, type ConfigErrors, type Static } from '../../sdk/index.ts';

/**
 * The plugin's own settings, from its `plugins` entry (the API keys live in `api.*` of
 * ConfigData). They tune the brute-force slowing of failed logins.
 *
 * @example
 * plugins: [{ name: 'auth', config: { fail_delay_ms: 50 } }, '*']
 */
export const AuthPluginConfig = Type.Object({
  /** Delay of the first failed login of an address; it doubles with every further failure. */
  fail_delay_ms: Type.Integer({ minimum: 0, default: 1000 }),
  /** Upper bound of the delay. */
  fail_delay_max_ms: Type.Integer({ minimum: 0, default: 30_000 }),
  /** Failures of an address are forgotten after this long without a new one. */
  fail_forget_ms: Type.Integer({ minimum: 1000, default: 15 * 60_000 }),
  /** Addresses remembered at most (least recently seen go first). */
  fail_max_addresses: Type.Integer({ minimum: 1, default: 10_000 }),
  /** Login attempts of one address queued at most; more are refused with 429. */
  fail_max_pending: Type.Integer({ minimum: 1, default: 8 }),
}, { default: {} });
export type AuthPluginConfig = Static<typeof AuthPluginConfig>;

/**
 * Rules of `api.auth`, the section this plugin owns (its schema is `ApiAuthConfig` of the SDK's
 * config sections); keys relative to `api.auth`.
 */
export function validateApiAuth(auth: Readonly<ApiAuthConfig>): ConfigErrors {
  const errs = new ConfigErrorList();
  if (auth.enable && (!auth.username || !auth.password)) {
    errs.add('enable', 'api.auth.username and api.auth.password must be set when auth is enabled');
  }
  return errs.map;
}

/** `api.Login` (reference 5.18). */
export const LoginBody = Type.Object({
  username: Type.String({ description: 'Local user name' }),
  password: Type.String({ description: 'Local password' }),
});

/** `api.JWT`. */
export const JwtBody = Type.Object({
  access_token: Type.String(),
  refresh_token: Type.String(),
});

/** `api.JWTRefresh`. */
export const JwtRefreshBody = Type.Object({
  access_token: Type.String(),
});

/** The claims of the service's own tokens (reference 3.2). */
export interface TokenClaims {
  iss: string;
  sub: string;
  usefor: 'access' | 'refresh';
  iat: number;
  exp: number;
  exi: number;
  jti: string;
  /** When the login began, ms (a refresh keeps its login's): IAM ends tokens older than a user's change. */
  login_ms: number;
}
