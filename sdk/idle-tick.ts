/**
 * A periodic job that runs only while it has work, so an idle service wakes for nothing (issue
 * 46.2): every `ms` it calls `run`, and stops when `run` returns false; `wake()` starts it again
 * (a no-op while it ticks or after `stop()`). The timer never keeps the process up.
 *
 * @example
 * const tick = new IdleTick(1000, () => { expireIdle(); return live.size > 0; });
 * live.set(id, session); tick.wake();
 */
export class IdleTick {
  readonly #ms: number;
  readonly #run: () => boolean;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(ms: number, run: () => boolean) {
    this.#ms = ms;
    this.#run = run;
  }

  /** Whether the timer runs. */
  get ticking(): boolean {
    return this.#timer !== undefined;
  }

  wake(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = setInterval(() => {
      if (!this.#run()) this.#halt();
    }, this.#ms).unref();
  }

  /** Ends it for good. */
  stop(): void {
    this.#stopped = true;
    this.#halt();
  }

  #halt(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
