/**
 * db.json text built from per-entry fragments. Stored objects are replaced, never mutated in
 * place (the manager records a fresh object per change), so a fragment cached by the object's
 * identity stays valid until the object is dropped: a save stringifies only what changed and
 * concatenates the rest, which keeps the event loop free with thousands of processes. The layout
 * is exactly `JSON.stringify(data, null, 4)`.
 */
export class FragmentCache {
  readonly #byObject = new WeakMap<object, string>();
  readonly #lines = new WeakMap<object, { key: string; depth: number; buf: Buffer }>();
  readonly #primitives = new WeakMap<object, Map<string, { v: unknown; depth: number; buf: Buffer }>>();

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

  /**
   * A dictionary whose values are fragments (cached by identity) at `depth`, appended to `out` as
   * UTF-8 pieces. Each entry's line (`<pad>"key": value`) is encoded once and kept with its object,
   * so a save copies bytes instead of joining and encoding megabytes of text on the event loop.
   */
  dict(obj: Record<string, unknown>, depth: number, out: Buffer[]): void {
    const keys = Object.keys(obj);
    let first = true;
    for (const key of keys) {
      const v = obj[key];
      if (v === undefined || typeof v === 'function') continue;
      out.push(first ? OPEN : COMMA);
      first = false;
      out.push(this.#line(obj, key, v, depth));
    }
    out.push(first ? EMPTY : closing(depth));
  }

  #line(dict: object, key: string, v: unknown, depth: number): Buffer {
    const pad = '    '.repeat(depth + 1);
    if (v === null || typeof v !== 'object') {
      // primitives (a process without metadata is `null`) are kept per dictionary and key
      let lines = this.#primitives.get(dict);
      if (!lines) this.#primitives.set(dict, lines = new Map());
      const hit = lines.get(key);
      if (hit !== undefined && hit.v === v && hit.depth === depth) return hit.buf;
      const buf = Buffer.from(`${pad}${JSON.stringify(key)}: ${this.fragment(v, depth + 1)}`);
      lines.set(key, { v, depth, buf });
      return buf;
    }
    const hit = this.#lines.get(v);
    if (hit !== undefined && hit.key === key && hit.depth === depth) return hit.buf;
    const buf = Buffer.from(`${pad}${JSON.stringify(key)}: ${this.fragment(v, depth + 1)}`);
    this.#lines.set(v, { key, depth, buf });
    return buf;
  }
}

const OPEN = Buffer.from('{\n');
const COMMA = Buffer.from(',\n');
const EMPTY = Buffer.from('{}');
const closings: Buffer[] = [];
function closing(depth: number): Buffer {
  return (closings[depth] ??= Buffer.from(`\n${'    '.repeat(depth)}}`));
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
