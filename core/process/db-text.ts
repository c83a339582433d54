import { changes, written } from './db-tracked.ts';
import { ownedBytes } from './owned-bytes.ts';

/**
 * db.json text built from per-entry fragments. Stored objects are replaced, never mutated in
 * place (the manager records a fresh object per change), so a fragment cached by the object's
 * identity stays valid until the object is dropped: a save stringifies only what changed and
 * concatenates the rest, which keeps the event loop free with thousands of processes. The layout
 * is exactly `JSON.stringify(data, null, 4)`.
 */
export class FragmentCache {
  readonly #byObject = new WeakMap<object, string>();
  readonly #blocks = new WeakMap<object, DictCache>();

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
   * UTF-8 pieces. Entries are grouped in blocks whose ends depend on the keys alone (a key's hash),
   * so adding or removing one entry changes one block; each block's bytes are kept with the keys
   * and values they were built from, and about one piece per 64 entries goes to writev. A tracked
   * dictionary (db-tracked.ts) whose values were only replaced rebuilds just their blocks; other
   * changes walk every key and reuse the blocks that did not change.
   */
  dict(obj: Record<string, unknown>, depth: number, out: Buffer[]): void {
    const ch = changes(obj);
    let cache = this.#blocks.get(obj);
    if (!cache || cache.depth !== depth) this.#blocks.set(obj, cache = { depth, order: [], byKey: new Map() });
    // a tracked dictionary whose values were only replaced: rebuild the blocks holding them
    if (!ch || ch.structural || !this.#patch(obj, cache, ch.keys)) this.#walk(obj, cache);
    if (ch) {
      ch.keys.clear();
      ch.structural = false;
    }
    for (const b of cache.order) out.push(b.buf);
    out.push(cache.order.length ? closing(depth) : EMPTY);
  }

  /** Every entry, in order: blocks whose keys and values are unchanged are reused. */
  #walk(obj: Record<string, unknown>, cache: DictCache): void {
    const byFirst = new Map<string, Block>();
    for (const b of cache.order) byFirst.set(b.keys[0]!, b);
    const order: Block[] = [];
    const byKey = new Map<string, Block>();
    let keys: string[] = [];
    let values: unknown[] = [];
    const flush = () => {
      const opens = order.length === 0;
      const old = byFirst.get(keys[0]!);
      const block = old && old.opens === opens && same(old.keys, keys) && same(old.values, values)
        ? old
        : { opens, keys, values, buf: this.#build(keys, values, cache.depth, opens) };
      order.push(block);
      for (const k of keys) byKey.set(k, block);
      keys = [];
      values = [];
    };
    for (const key of Object.keys(obj)) {
      const v = obj[key];
      if (!written(v)) continue;
      keys.push(key);
      values.push(v);
      if (endsBlock(key)) flush();
    }
    if (keys.length) flush();
    cache.order = order;
    cache.byKey = byKey;
  }

  /** Rebuilds the blocks of replaced values; false when a key is not where the cache has it. */
  #patch(obj: Record<string, unknown>, cache: DictCache, changed: ReadonlySet<string>): boolean {
    const touched = new Set<Block>();
    for (const k of changed) {
      const b = cache.byKey.get(k);
      if (!b) return false;
      touched.add(b);
    }
    for (const b of touched) {
      const values = b.keys.map((k) => obj[k]);
      if (!values.every(written)) return false;
      if (same(values, b.values)) continue;
      const block: Block = { opens: b.opens, keys: b.keys, values, buf: this.#build(b.keys, values, cache.depth, b.opens) };
      cache.order[cache.order.indexOf(b)] = block;
      for (const k of b.keys) cache.byKey.set(k, block);
    }
    return true;
  }

  /**
   * A block's bytes: its lines as one string, encoded once into memory of its own (the values'
   * fragments are cached; a line is only their indent and key, so no line is kept apart).
   */
  #build(keys: readonly string[], values: readonly unknown[], depth: number, opens: boolean): Buffer {
    const pad = '    '.repeat(depth + 1);
    let text = '';
    for (let i = 0; i < keys.length; i++) {
      text += `${i === 0 && opens ? '{' : ','}\n${pad}${JSON.stringify(keys[i])}: ${this.fragment(values[i], depth + 1)}`;
    }
    return ownedBytes(text);
  }
}

/** Consecutive entries of a dictionary as written (with the separator before each). */
interface Block {
  /** Whether the block starts the dictionary (`{` instead of `,` before its first entry). */
  opens: boolean;
  keys: string[];
  values: unknown[];
  buf: Buffer;
}

/** A dictionary's text as blocks, in order, and the block holding each key. */
interface DictCache {
  depth: number;
  order: Block[];
  byKey: Map<string, Block>;
}

const BLOCK_MASK = 63;

/** Whether a block ends after this key: about one key in 64, chosen by the key itself (FNV-1a). */
function endsBlock(key: string): boolean {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return ((h >>> 0) & BLOCK_MASK) === 0;
}

function same(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

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
