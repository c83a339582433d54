import type { ProcessClock } from '../../sdk/index.ts';
import { lastStart, nextStart, type Schedule } from './schedule.ts';

/** What a schedule drives: the process's supervisor and the engine's notices. */
export interface SchedulePort {
  clock: ProcessClock;
  /** Starts before this time (ms, the config's last save) do not count: a new process waits for its first. */
  since: number;
  /** Start a run (cause `schedule`); idempotent. */
  start(): void;
  /** End the run (cause `duration`), no reconnect; the order stays `start`. */
  stop(): void;
  /** The process waits for its next start at `at` (ms). */
  scheduled(at: number): void;
}

/** node's timers take at most 2^31-1 ms; a later time is reached in steps. */
const MAX_DELAY = 2 ** 31 - 1;

/**
 * Runs one process on its schedule while armed (order `start`): each start opens a window of
 * `runtime_duration_seconds` (unbounded when 0), and the process runs while the latest start's
 * window is open. Arming inside an open window (a start due while the service was down) starts
 * at once, for what is left of it.
 */
export class ScheduleRunner {
  readonly #schedule: Schedule;
  readonly #durationMs: number;
  readonly #port: SchedulePort;
  #cancelStart: (() => void) | undefined;
  #cancelStop: (() => void) | undefined;
  #next: number | undefined;

  constructor(schedule: Schedule, durationSeconds: number, port: SchedulePort) {
    this.#schedule = schedule;
    this.#durationMs = durationSeconds * 1000;
    this.#port = port;
  }

  /** The next start (ms) while armed, else undefined. */
  get nextRun(): number | undefined { return this.#next; }

  /** Whether the latest start's window is open now. */
  inWindow(): boolean {
    return this.#windowEnd(this.#port.clock.now()) !== undefined;
  }

  arm(): void {
    this.disarm();
    const now = this.#port.clock.now();
    const end = this.#windowEnd(now);
    if (end !== undefined) {
      this.#port.start();
      this.#stopAt(end);
    }
    this.#planAfter(now);
  }

  disarm(): void {
    this.#cancelStart?.();
    this.#cancelStop?.();
    this.#cancelStart = undefined;
    this.#cancelStop = undefined;
    this.#next = undefined;
  }

  /** The end of the window open at `now` (Infinity without a duration), or undefined. */
  #windowEnd(now: number): number | undefined {
    const last = lastStart(this.#schedule, now, this.#port.since);
    if (last === undefined) return undefined;
    const end = this.#durationMs > 0 ? last + this.#durationMs : Infinity;
    return now < end ? end : undefined;
  }

  #planAfter(t: number): void {
    const next = nextStart(this.#schedule, t);
    this.#next = next;
    if (next === undefined) return;
    this.#cancelStart = this.#at(next, () => {
      this.#cancelStart = undefined;
      this.#port.start();
      this.#stopAt(this.#durationMs > 0 ? next + this.#durationMs : Infinity);
      this.#planAfter(next);
    });
    this.#port.scheduled(next);
  }

  #stopAt(end: number): void {
    this.#cancelStop?.();
    this.#cancelStop = undefined;
    if (end === Infinity) return;
    this.#cancelStop = this.#at(end, () => {
      this.#cancelStop = undefined;
      this.#port.stop();
    });
  }

  /** Calls `fn` at time `at` of the clock; returns the cancel. */
  #at(at: number, fn: () => void): () => void {
    const clock = this.#port.clock;
    let cancel: () => void = () => {};
    // always through the clock, never synchronously: the caller stores the cancel first
    const step = (): void => {
      const left = Math.max(0, at - clock.now());
      cancel = clock.setTimeout(left > MAX_DELAY ? step : fn, Math.min(left, MAX_DELAY));
    };
    step();
    return () => cancel();
  }
}
