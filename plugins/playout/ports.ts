/**
 * The playout port pool `playout.min_port..max_port` (reference 14): the lowest free port first.
 * A port found busy on the machine can be skipped by the caller for one allocation.
 */
export class PortPool {
  readonly min: number;
  readonly max: number;
  readonly #used = new Set<number>();

  constructor(min: number, max: number) {
    this.min = min;
    this.max = max;
  }

  /** The lowest port neither in use nor in `skip`, now in use; undefined when none is left. */
  acquire(skip: ReadonlySet<number> = new Set()): number | undefined {
    for (let p = this.min; p <= this.max; p++) {
      if (this.#used.has(p) || skip.has(p)) continue;
      this.#used.add(p);
      return p;
    }
    return undefined;
  }

  release(port: number): void {
    this.#used.delete(port);
  }

  /** Ports not handed out. */
  get free(): number {
    return this.max - this.min + 1 - this.#used.size;
  }

  /** Ports handed out now. */
  get used(): number {
    return this.#used.size;
  }
}
