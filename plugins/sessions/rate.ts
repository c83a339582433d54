/** Bit rates as the reference measures them: the average over the last 10 s in 1 s buckets. */
const WINDOW = 10;

export class Rate {
  /** Every byte counted, the window's and before. */
  total = 0;
  readonly #bytes = new Float64Array(WINDOW);
  readonly #second = new Float64Array(WINDOW).fill(-1);

  add(bytes: number, nowMs: number): void {
    const s = Math.floor(nowMs / 1000);
    const i = s % WINDOW;
    if (this.#second[i] !== s) {
      this.#second[i] = s;
      this.#bytes[i] = 0;
    }
    this.#bytes[i]! += bytes;
    this.total += bytes;
  }

  /** bit/s averaged over the last 10 s (the current second included). */
  bitrate(nowMs: number): number {
    const s = Math.floor(nowMs / 1000);
    let sum = 0;
    for (let i = 0; i < WINDOW; i++) if (s - this.#second[i]! < WINDOW) sum += this.#bytes[i]!;
    return (sum * 8) / WINDOW;
  }
}
