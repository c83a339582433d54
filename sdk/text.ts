/*
 * Text a client sends that no program or JSON reader should get: NUL and lone UTF-16 surrogates.
 */

// a high surrogate not followed by a low one, or a low one not preceded by a high one
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Whether `s` is well-formed Unicode: no lone surrogate (one would be `\ud800` in JSON, which strict
 * parsers refuse, and cannot be written to a URL again).
 *
 * @example
 * wellFormedText('cam-\u00e9'); // true
 * wellFormedText('\ud800x'); // false
 */
export function wellFormedText(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * Whether `s` is text a config value or a program argument can carry: well-formed and without NUL
 * (no program takes NUL in an argument; C strings end there).
 *
 * @example
 * plainText('a\u0000b'); // false
 */
export function plainText(s: string): boolean {
  return !s.includes('\0') && wellFormedText(s);
}

/**
 * The dotted path of the first string in `value` (objects and arrays walked) that is not
 * `plainText`, or undefined when every string is.
 *
 * @example
 * badTextPath({ output: [{ address: 'a\u0000' }] }); // 'output.0.address'
 */
export function badTextPath(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return plainText(value) ? undefined : path || '(root)';
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    const bad = badTextPath(v, path ? `${path}.${k}` : k);
    if (bad !== undefined) return bad;
  }
  return undefined;
}
