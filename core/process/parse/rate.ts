// Per-second rates over a sliding window of 1-second buckets (reference 7.7: 30 s). ffmpeg's own
// fps= and bitrate= are averages over the whole run, which hide a stream that has just slowed down.

export class SlidingRate {
  readonly #window: number;
  // one slot more than the window: the current, still open second must not evict the oldest one;
  // both made at the first count (a process that never ran has none: issue 46.4)
  #values: Float64Array | undefined;
  // absolute second each bucket currently holds, so stale buckets are recognised without a sweep
  #stamps: Float64Array | undefined;
  #first = -1;

  constructor(windowSeconds = 30) {
    this.#window = Math.max(1, Math.floor(windowSeconds));
  }

  /** Counts `amount` (frames, packets, bits...) at time `nowMs`. */
  add(amount: number, nowMs: number): void {
    const sec = Math.floor(nowMs / 1000);
    if (this.#first < 0) this.#first = sec;
    const values = (this.#values ??= new Float64Array(this.#window + 1));
    const stamps = (this.#stamps ??= new Float64Array(this.#window + 1).fill(-1));
    const slot = sec % values.length;
    if (stamps[slot] !== sec) {
      stamps[slot] = sec;
      values[slot] = 0;
    }
    values[slot]! += amount;
  }

  /**
   * Average per second over the completed buckets of the window, NaN before the first second is over.
   * Unlike the original, a young window is divided by its real age rather than by the full window,
   * so the value does not creep up during the first 30 s of a run.
   */
  rate(nowMs: number): number {
    const stamps = this.#stamps;
    const values = this.#values;
    if (this.#first < 0 || !stamps || !values) return NaN;
    const sec = Math.floor(nowMs / 1000);
    const count = Math.min(this.#window, sec - this.#first);
    if (count <= 0) return NaN;
    let sum = 0;
    for (let i = 0; i < stamps.length; i++) {
      const stamp = stamps[i]!;
      if (stamp >= sec - count && stamp < sec) sum += values[i]!;
    }
    return sum / count;
  }

  reset(): void {
    this.#first = -1;
    this.#stamps?.fill(-1);
    this.#values?.fill(0);
  }
}
