import type { ProcessClock } from '../../../sdk/index.ts';

interface Timer { at: number; seq: number; fn: () => void }

/**
 * A schedule clock the test moves by hand: `advance` steps time forward and runs every timer
 * that falls due on the way, in time order (timers set while running count too).
 */
export class FakeClock implements ProcessClock {
  #now: number;
  #seq = 0;
  #timers: Timer[] = [];

  constructor(start: number) {
    this.#now = start;
  }

  now(): number { return this.#now; }

  setTimeout(fn: () => void, ms: number): () => void {
    const timer: Timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(timer);
    return () => { this.#timers = this.#timers.filter((x) => x !== timer); };
  }

  /** Pending timers (a disarmed schedule leaves none). */
  get pending(): number { return this.#timers.length; }

  advance(ms: number): void {
    const target = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((x) => x.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((x) => x !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
  }
}
