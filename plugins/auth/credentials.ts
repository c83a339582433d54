import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in constant time: both sides are hashed first, so the comparison
 * neither leaks the length nor returns early at the first differing byte.
 */
export function safeEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Checks a username and password pair; both are always compared (no short circuit). */
export function credentialsMatch(
  given: { username: string; password: string },
  expected: { username: string; password: string },
): boolean {
  const user = safeEqual(given.username, expected.username);
  const pass = safeEqual(given.password, expected.password);
  return user && pass && expected.username !== '' && expected.password !== '';
}

/** The `{username, password}` of a login body, when it has both as non-empty strings. */
export function localLogin(body: unknown): { username: string; password: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { username, password } = body as Record<string, unknown>;
  if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) return undefined;
  return { username, password };
}
