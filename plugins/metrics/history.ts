import type { MetricValue } from './api.ts';

/** One series (a name and one set of label values) with its value at every kept sample. */
export interface Series {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  /** Value per ring slot; NaN where the series had no value in that sample. */
  readonly values: Float64Array;
  /** Number of the last sample that carried a value. */
  lastSeen: number;
}

/** A stable identity of a series: its name and label values in key order. */
export function seriesKey(v: MetricValue): string {
  let key = v.name;
  for (const k in v.labels) key += `\0${k}=${v.labels[k]}`;
  return key;
}

/**
 * The last `size` samples of every series, in fixed rings: recording a sample writes into
 * preallocated arrays (a series allocates once, when it first appears), so sampling every
 * couple of seconds for hours does not churn the heap. A series absent for a whole range is
 * dropped.
 */
export class MetricsHistory {
  readonly size: number;
  readonly #times: Float64Array;
  readonly #series = new Map<string, Series>();
  /** Samples recorded so far; slot of sample n is n % size. */
  #count = 0;

  constructor(size: number) {
    this.size = Math.max(1, Math.floor(size));
    this.#times = new Float64Array(this.size);
  }

  /** Records one sample taken at `ts` (ms). */
  record(ts: number, values: readonly MetricValue[]): void {
    const n = this.#count;
    const slot = n % this.size;
    this.#times[slot] = ts;
    for (const [key, s] of this.#series) {
      if (n - s.lastSeen >= this.size) this.#series.delete(key);
      else s.values[slot] = NaN;
    }
    for (const v of values) {
      const key = seriesKey(v);
      let s = this.#series.get(key);
      if (!s) {
        s = { name: v.name, labels: v.labels, values: new Float64Array(this.size).fill(NaN), lastSeen: n };
        this.#series.set(key, s);
      }
      s.values[slot] = v.value;
      s.lastSeen = n;
    }
    this.#count = n + 1;
  }

  /** Ring slots of the kept samples taken at or after `notBefore` (ms), oldest first. */
  slotsSince(notBefore: number): number[] {
    const kept = Math.min(this.#count, this.size);
    const out: number[] = [];
    for (let i = this.#count - kept; i < this.#count; i++) {
      const slot = i % this.size;
      if (this.#times[slot]! >= notBefore) out.push(slot);
    }
    return out;
  }

  time(slot: number): number {
    return this.#times[slot]!;
  }

  series(): IterableIterator<Series> {
    return this.#series.values();
  }
}
