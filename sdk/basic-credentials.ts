import { createHash, timingSafeEqual } from 'node:crypto';
import type { BasicCredentials } from './credentials.ts';

const SCHEME = /^basic\s/i;
const SPACE = /\s/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The credential of an `Authorization: Basic base64(user:pass)` header (reference 3.7): the
 * scheme matched case-insensitively, the user ending at the first colon (no colon: an empty
 * password). `'missing'` without a Basic credential (a 401), `'malformed'` when it is not base64
 * (a 400). Used by the auth plugin's Basic auth and by the memfs serving threads, which take an
 * upload only with exactly the configured credential.
 *
 * @example
 * const given = parseBasicAuthorization(req.headers.authorization);
 * if (given === 'missing') throw unauthorized();
 */
export function parseBasicAuthorization(header: unknown): BasicCredentials | 'missing' | 'malformed' {
  // taken apart without a RegExp over the whole value: `\s+(\S*)\s*$` took quadratic time on a
  // run of spaces (5 s for 60,000 of them, before any credential was known)
  if (typeof header !== 'string' || !SCHEME.test(header)) return 'missing';
  const encoded = header.slice(6).trim();
  if (SPACE.test(encoded)) return 'missing';
  if (encoded.length % 4 === 1 || !BASE64.test(encoded)) return 'malformed';
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? { username: decoded, password: '' } : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Compares two secrets in constant time: both sides are hashed first, so the comparison neither
 * leaks the length nor returns early at the first differing byte.
 *
 * @example
 * if (!safeEqual(given.token, expected)) throw unauthorized();
 */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * A username and password against the expected pair: both compared in constant time (no short
 * circuit); an expected pair with an empty part never matches.
 *
 * @example
 * basicCredentialsMatch({ username: 'admin', password: 'x' }, config.auth) // false unless both equal
 */
export function basicCredentialsMatch(given: BasicCredentials, expected: BasicCredentials): boolean {
  const user = safeEqual(given.username, expected.username);
  const pass = safeEqual(given.password, expected.password);
  return user && pass && expected.username !== '' && expected.password !== '';
}
