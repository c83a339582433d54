/** The `{username, password}` of a login body, when it has both as non-empty strings. */
export function localLogin(body: unknown): { username: string; password: string } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { username, password } = body as Record<string, unknown>;
  if (typeof username !== 'string' || typeof password !== 'string' || !username || !password) return undefined;
  return { username, password };
}
