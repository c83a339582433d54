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

/** A series as the history keeps it, with its key. */
interface Kept extends Series {
  readonly key: string;
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
 * dropped. A sample laid out as the one before (each value at the same place with the same name
 * and the same labels object, which collectors that keep their label objects give: every built-in
 * one) and carrying every kept series is written straight into the series the last sample found:
 * two comparisons and a store per value, no key text, no pass over absent series. Sampling is
 * most of an idle service's CPU (issue 46.2).
 */
export class MetricsHistory {
  readonly size: number;
  readonly #times: Float64Array;
  readonly #series = new Map<string, Kept>();
  /** The last sample's layout: per value its labels object and series (whose name is the value's). */
  #labels: object[] = [];
  #found: Kept[] = [];
  /** The last sample named no series twice (else its layout is never taken as is). */
  #distinct = false;
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
    if (this.#distinct && values.length === this.#series.size && this.#sameLayout(values)) {
      const found = this.#found;
      for (let i = 0; i < values.length; i++) {
        const s = found[i]!;
        s.values[slot] = values[i]!.value;
        s.lastSeen = n;
      }
    } else this.#recordChanged(n, slot, values);
    this.#count = n + 1;
  }

  #sameLayout(values: readonly MetricValue[]): boolean {
    if (values.length !== this.#found.length) return false;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v.labels !== this.#labels[i] || v.name !== this.#found[i]!.name) return false;
    }
    return true;
  }

  /** A sample laid out otherwise: absent series get NaN (or leave), each value finds its series by key. */
  #recordChanged(n: number, slot: number, values: readonly MetricValue[]): void {
    for (const s of this.#series.values()) {
      if (n - s.lastSeen >= this.size) this.#series.delete(s.key);
      else s.values[slot] = NaN;
    }
    const labels: object[] = new Array<object>(values.length);
    const found: Kept[] = new Array<Kept>(values.length);
    let distinct = true;
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      const key = seriesKey(v);
      let s = this.#series.get(key);
      if (!s) {
        s = { name: v.name, labels: v.labels, values: new Float64Array(this.size).fill(NaN), lastSeen: -1, key };
        this.#series.set(key, s);
      }
      if (s.lastSeen === n) distinct = false;
      s.values[slot] = v.value;
      s.lastSeen = n;
      labels[i] = v.labels;
      found[i] = s;
    }
    this.#labels = labels;
    this.#found = found;
    this.#distinct = distinct;
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
