import picomatch from 'picomatch';

/**
 * Compiled glob matchers (`*` stays in a folder, `**` crosses, dotfiles match), kept per
 * filesystem: cleanup rules list the same globs every few seconds for every process, and
 * compiling them each time costs more than the listing.
 *
 * @example
 * readonly #globs = new GlobMatchers();
 * list(glob) { const match = this.#globs.get(glob); return names.filter((n) => match(n)); }
 */
export class GlobMatchers {
  readonly #cache = new Map<string, (path: string) => boolean>();
  readonly #max: number;

  constructor(max = 16_384) {
    this.#max = max;
  }

  get(glob: string): (path: string) => boolean {
    let m = this.#cache.get(glob);
    if (m === undefined) {
      // bounded: a client sending ever new globs cannot grow it without end
      if (this.#cache.size >= this.#max) this.#cache.clear();
      m = picomatch(glob, { dot: true });
      this.#cache.set(glob, m);
    }
    return m;
  }
}
