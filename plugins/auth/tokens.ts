import { randomBytes, randomUUID } from 'node:crypto';
import type { TokenClaims } from './schema.ts';

/** jose (46 modules) loads with the first token issued or checked: the plugin is set up with auth off too (issue 46.4). */
let jose: Promise<typeof import('jose')> | undefined;
const loadJose = () => (jose ??= import('jose'));

const ISSUER = 'datarhei-core';
/** Lifetimes of reference 3.2, in seconds. */
export const ACCESS_TTL = 600;
export const REFRESH_TTL = 86_400;
/** Our own tokens are a few hundred bytes; anything much larger is refused before parsing. */
const MAX_TOKEN_LENGTH = 8192;

export type TokenUse = TokenClaims['usefor'];

/** A valid token's subject and when its login was (ms; a refresh keeps its login's). */
export interface TokenHolder { subject: string; loginMs: number }

/**
 * Issues and verifies the service's HS256 tokens. The key is `username + password + jwt.secret`
 * (reference 3.2), so tokens survive a restart and die when the credentials change; without a
 * configured secret a random one is made per start.
 */
export class TokenIssuer {
  readonly #key: Uint8Array;

  constructor(opts: { username: string; password: string; secret: string }) {
    const secret = opts.secret
      ? opts.username + opts.password + opts.secret
      : randomBytes(24).toString('base64url');
    this.#key = new TextEncoder().encode(secret);
  }

  /**
   * A token for `subject`. `loginMs` is when its login began (a refresh passes the refresh token's):
   * IAM ends every token of a user whose login predates a change of its password or its name.
   */
  async issue(subject: string, use: TokenUse, loginMs = Date.now()): Promise<string> {
    const exi = use === 'access' ? ACCESS_TTL : REFRESH_TTL;
    const { SignJWT } = await loadJose();
    const iat = Math.floor(Date.now() / 1000);
    return new SignJWT({ usefor: use, exi, login_ms: loginMs })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + exi)
      .setJti(randomUUID())
      .sign(this.#key);
  }

  /**
   * The subject of a valid token for `use` and its login time, or undefined. Checks signature
   * (HS256 only: no `none`, no algorithm confusion), issuer, `exp`/`nbf`, and that `usefor` is
   * exactly `use`, so a refresh token never passes as an access token nor the reverse. A token
   * without `login_ms` (issued before it existed) logged in when it was issued.
   */
  async verify(token: string, use: TokenUse): Promise<TokenHolder | undefined> {
    if (token.length > MAX_TOKEN_LENGTH) return undefined;
    const { jwtVerify } = await loadJose();
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        requiredClaims: ['exp', 'sub'],
      });
      if (payload.usefor !== use || typeof payload.sub !== 'string' || payload.sub === '') return undefined;
      const login = payload.login_ms;
      const loginMs = typeof login === 'number' && Number.isSafeInteger(login) ? login : (payload.iat ?? 0) * 1000;
      return { subject: payload.sub, loginMs };
    } catch {
      return undefined;
    }
  }
}
