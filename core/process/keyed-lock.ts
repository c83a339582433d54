/**
 * Serialises work per key (process ID): two requests on one process never interleave, while
 * requests on different processes run side by side (a 5 s stop of one holds up no other).
 */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    const unique = [...new Set(keys)].sort();
    const prev = unique.map((k) => this.#tails.get(k) ?? Promise.resolve());
    let release!: () => void;
    const done = new Promise<void>((r) => { release = r; });
    for (const k of unique) this.#tails.set(k, done);
    try {
      await Promise.all(prev);
      return await fn();
    } finally {
      release();
      for (const k of unique) if (this.#tails.get(k) === done) this.#tails.delete(k);
    }
  }
}
