import picomatch from 'picomatch';

/**
 * A compiled glob as every filesystem matches them: `*` stays in a folder, `**` crosses, dotfiles match.
 * Keep it as long as the glob is used (a rule's, a listing's); `GlobMatchers` keeps the recent ones.
 *
 * @example
 * const match = globMatcher('/live/*.ts');
 * match('/live/a.ts'); // true
 * match('/live/x/a.ts'); // false
 */
export function globMatcher(glob: string): (path: string) => boolean {
  return picomatch(glob, { dot: true });
}

/**
 * The globs a filesystem was listed with lately, compiled (`globMatcher`): a client listing the
 * same glob again, or a cleanup tick, does not compile it each time, which costs more than the
 * listing. The least recently used goes first once `max` are kept: a compiled glob is about
 * 3 KB, and the globs of deleted processes (their `purge_on_delete` listings) must not pile up
 * (issue 46: kept until 16,384 of them, 50 MB). Something that needs a fixed set of globs every
 * few seconds keeps its own matchers (the process engine's cleanup rules do).
 *
 * @example
 * readonly #globs = new GlobMatchers();
 * list(glob) { const match = this.#globs.get(glob); return names.filter((n) => match(n)); }
 */
export class GlobMatchers {
  readonly #cache = new Map<string, (path: string) => boolean>();
  readonly #max: number;

  constructor(max = 256) {
    this.#max = Math.max(1, max);
  }

  get size(): number { return this.#cache.size; }

  get(glob: string): (path: string) => boolean {
    let m = this.#cache.get(glob);
    if (m !== undefined) {
      // most recently used last: a Map keeps insertion order
      this.#cache.delete(glob);
    } else {
      m = globMatcher(glob);
      if (this.#cache.size >= this.#max) this.#cache.delete(this.#cache.keys().next().value!);
    }
    this.#cache.set(glob, m);
    return m;
  }
}
