import { createHmac, timingSafeEqual } from 'node:crypto';

/*
 * Session tokens of the file mounts (issue 49, the successor's `services.session`): a JWT signed
 * HS256 with one of a user's session secrets, issuer `datarhei-core`, subject the user's name,
 * `exp` its end, `data` what the token is limited to (`match`: a glob of the paths it reads;
 * `remote`: globs of the `Referer` hosts it is read from; `extra`: kept for the caller). A reader
 * sends it as `?token=` on a public mount. Pure: no users, no clock but the one given.
 */

export const SESSION_ISSUER = 'datarhei-core';
/** The longest token a reader may send (a URL's query; longer ones are refused unread). */
export const MAX_TOKEN_CHARS = 8192;

/** What a session token carries besides its subject and times. */
export interface SessionData {
  match?: string;
  remote?: string[];
  extra?: Record<string, unknown>;
}

export interface SessionClaims {
  iss: string;
  sub: string;
  iat: number;
  exp: number;
  data: SessionData;
}

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

const mac = (secret: string, signed: string) => createHmac('sha256', secret).update(signed).digest();

/** A token for `subject`, valid `ttlSeconds` from `now` (seconds), signed with `secret`. */
export function signSession(secret: string, subject: string, data: SessionData, ttlSeconds: number, now: number): string {
  const claims: SessionClaims = { iss: SESSION_ISSUER, sub: subject, iat: now, exp: now + ttlSeconds, data };
  const signed = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${signed}.${mac(secret, signed).toString('base64url')}`;
}

/** The subject a token names, read before its signature is checked (to find whose secrets to try); undefined for no JWT. */
export function sessionSubject(token: string): string | undefined {
  const claims = parts(token)?.claims;
  return typeof claims?.sub === 'string' ? claims.sub : undefined;
}

function parts(token: string): { signed: string; sig: Buffer; claims: Partial<SessionClaims> } | undefined {
  if (token.length > MAX_TOKEN_CHARS) return undefined;
  const a = token.indexOf('.');
  const b = token.indexOf('.', a + 1);
  if (a < 0 || b < 0 || token.indexOf('.', b + 1) >= 0) return undefined;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, a), 'base64url').toString()) as { alg?: unknown };
    if (header?.alg !== 'HS256') return undefined;
    const claims = JSON.parse(Buffer.from(token.slice(a + 1, b), 'base64url').toString()) as Partial<SessionClaims>;
    if (claims === null || typeof claims !== 'object') return undefined;
    return { signed: token.slice(0, b), sig: Buffer.from(token.slice(b + 1), 'base64url'), claims };
  } catch {
    return undefined;
  }
}

/**
 * The claims of `token` when one of `secrets` signed it, its issuer is ours, its subject one of
 * `names` (the user's name or alias) and `now` is before its end; else why not.
 */
export function verifySession(token: string, secrets: readonly string[], names: readonly string[], now: number): SessionClaims | string {
  const p = parts(token);
  if (!p) return 'not a session token';
  const c = p.claims;
  if (typeof c.sub !== 'string' || !names.includes(c.sub)) return 'wrong subject';
  if (c.iss !== SESSION_ISSUER) return 'wrong issuer';
  if (!secrets.some((s) => { const m = mac(s, p.signed); return m.length === p.sig.length && timingSafeEqual(m, p.sig); })) return 'wrong signature';
  if (typeof c.exp !== 'number' || c.exp <= now) return 'expired';
  const data = c.data !== null && typeof c.data === 'object' ? c.data : {};
  return { iss: c.iss, sub: c.sub, iat: typeof c.iat === 'number' ? c.iat : 0, exp: c.exp, data };
}
