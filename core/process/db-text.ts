/**
 * db.json text built from per-entry fragments. Stored objects are replaced, never mutated in
 * place (the manager records a fresh object per change), so a fragment cached by the object's
 * identity stays valid until the object is dropped: a save stringifies only what changed and
 * concatenates the rest, which keeps the event loop free with thousands of processes. The layout
 * is exactly `JSON.stringify(data, null, 4)`.
 */
export class FragmentCache {
  readonly #byObject = new WeakMap<object, string>();

  /** The value as it appears at `depth` (levels of 4-space indent); throws when not storable. */
  fragment(value: unknown, depth: number): string {
    const cacheable = value !== null && typeof value === 'object';
    if (cacheable) {
      const hit = this.#byObject.get(value);
      if (hit !== undefined) return hit;
    }
    const text = stringify(value, depth);
    if (cacheable) this.#byObject.set(value, text);
    return text;
  }

  /** A dictionary whose values are fragments (cached by identity) at `depth`. */
  dict(obj: Record<string, unknown>, depth: number): string {
    const pad = '    '.repeat(depth + 1);
    const parts: string[] = [];
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      if (v === undefined || typeof v === 'function') continue;
      parts.push(`${pad}${JSON.stringify(key)}: ${this.fragment(v, depth + 1)}`);
    }
    return parts.length ? `{\n${parts.join(',\n')}\n${'    '.repeat(depth)}}` : '{}';
  }
}

/**
 * One value, pretty-printed and indented for its depth. A value JSON cannot represent (a cycle,
 * nesting too deep for the stack) throws `NotStorable`, so the caller can refuse the change.
 */
export function stringify(value: unknown, depth: number): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value, null, 4);
  } catch (err) {
    throw new NotStorable((err as Error).message);
  }
  if (text === undefined) return 'null';
  // JSON strings never hold a raw newline, so every newline is a line break of the layout
  return depth === 0 ? text : text.replace(/\n/g, `\n${'    '.repeat(depth)}`);
}

export class NotStorable extends Error {
  readonly code = 'DB_NOT_STORABLE';
}
