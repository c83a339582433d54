import type { ProcessClock } from '../../sdk/index.ts';
import type { ProcessEntry } from './process-entry.ts';
import { rfc3339 } from './schedule.ts';

/** The engine's side (demand/hub.ts) of on-demand processes. */
export interface DemandEnv {
  /** `encoder.ondemand.idle_seconds`: the idle time of a process that sets none. */
  idleSeconds: number;
  /** Stream readers attached to what the process publishes. */
  attached(e: ProcessEntry): number;
  /** HLS viewers of its files seen within its idle time. */
  viewers(e: ProcessEntry, idleMs: number): number;
  /** It waits for a reader now: its waiting playlist goes up. */
  waiting(e: ProcessEntry): void;
  /** It no longer waits (order `stop`, deleted): its waiting playlist goes. */
  unarmed(e: ProcessEntry): void;
}


/** What a demand runner drives: the process's supervisor, its readers and the engine's notices. */
export interface DemandPort {
  clock: ProcessClock;
  /** Seconds it runs on after its last reader left. */
  idleSeconds: number;
  /** Start a run (cause `demand`); idempotent. */
  start(): void;
  /** End the run (cause `idle`), no reconnect; the order stays `start`. Resolves once it ended. */
  stop(): Promise<void>;
  /** Readers attached now (stream readers; HLS viewers are demands, `demand()`). */
  attached(): number;
  /** HLS viewers seen within the idle time. */
  viewers(): number;
  /** A demand start or an idle stop happened (events). */
  told(action: 'start' | 'stop', reason: string, readers: number): unknown;
  /** It waits for a reader now (armed, or stopped for idleness): the waiting playlist goes up. */
  waiting(): void;
  /** No run is active or coming by itself (no reconnect pending). */
  settled(): boolean;
}

/** `state.ondemand` (schema.ts ProcessState). */
export interface DemandView {
  waiting: boolean;
  readers: number;
  started_by?: string;
  stop_at?: number;
  idle_seconds: number;
}

/** How often a run with attached readers checks whether they are still there, ms. */
const RECHECK_MS = 1000;
/** A run that ended by itself is started by a demand no sooner than this after (a source failing at once is not respawned per request), ms. */
const RETRY_MS = 2000;

/**
 * Runs one on-demand process (config `ondemand.enable`) while armed (order `start`): it waits
 * until a reader asks (`demand`), runs, and stops `idleSeconds` after the last demand when no
 * reader is attached any more; then it waits again. Never touches a process while disarmed.
 */
export class DemandRunner {
  readonly #port: DemandPort;
  #armed = false;
  #running = false;
  #startedBy: string | undefined;
  /** The last demand or the last time readers were seen attached (clock ms). */
  #last = 0;
  /** Until then a reader waits for the run's first publish (clock ms): no idle stop before it. */
  #holdUntil = 0;
  #cancel: (() => void) | undefined;
  /** When a run last ended by itself (clock ms), and the start a demand meanwhile put off. */
  #endedAt = -Infinity;
  #retry: (() => void) | undefined;

  constructor(port: DemandPort) {
    this.#port = port;
  }

  get armed(): boolean { return this.#armed; }
  get running(): boolean { return this.#running; }

  /** Order `start`: wait for a reader (nothing runs yet). */
  arm(): void {
    this.#cancelTimer();
    const was = this.#armed;
    this.#armed = true;
    if (!was || !this.#running) {
      this.#running = false;
      this.#startedBy = undefined;
      this.#port.waiting();
    }
  }

  /** Order `stop` (or the entry goes): no demand starts it any more. */
  disarm(): void {
    this.#cancelTimer();
    this.#retry?.();
    this.#retry = undefined;
    this.#armed = false;
    this.#running = false;
    this.#startedBy = undefined;
    this.#holdUntil = 0;
  }

  /**
   * A reader asked for what the process produces (`hls`, `stream`): starts it when waiting.
   * `holdMs`: how long that reader waits for the publish (a stream reader's wait): a run slower
   * to publish than its idle time is not stopped under it.
   */
  demand(reason: string, holdMs = 0): boolean {
    if (!this.#armed) return false;
    this.#last = this.#port.clock.now();
    if (holdMs > 0) this.#holdUntil = Math.max(this.#holdUntil, this.#last + holdMs);
    if (!this.#running) {
      const wait = this.#endedAt + RETRY_MS - this.#last;
      if (wait > 0) {
        this.#retry ??= this.#port.clock.setTimeout(() => {
          this.#retry = undefined;
          this.demand(reason);
        }, wait);
        return true;
      }
      this.#running = true;
      this.#startedBy = reason;
      this.#port.start();
      this.#port.told('start', reason, Math.max(1, this.readers()));
    }
    this.#plan(this.#end());
    return true;
  }

  /**
   * A run ended. When nothing brings it back by itself (a start refused or failed, an exit with no
   * reconnect; asked once the supervisor went on: a restart's start or a reconnect's timer), it
   * waits again: the waiting playlist goes up and the next demand starts it (a reader that stays
   * attached kept a failed run "running" until it left).
   */
  ended(): void {
    setImmediate(() => {
      if (!this.#armed || !this.#running || !this.#port.settled()) return;
      this.#endedAt = this.#port.clock.now();
      this.#cancelTimer();
      this.#running = false;
      this.#startedBy = undefined;
      this.#holdUntil = 0;
      this.#port.waiting();
    });
  }

  readers(): number {
    return this.#port.attached() + this.#port.viewers();
  }

  view(): DemandView {
    const idle = this.#port.idleSeconds;
    if (!this.#armed || !this.#running) return { waiting: this.#armed, readers: this.#armed ? this.readers() : 0, idle_seconds: idle };
    const readers = this.readers();
    const v: DemandView = { waiting: false, readers, started_by: this.#startedBy, idle_seconds: idle };
    if (this.#port.attached() === 0) v.stop_at = this.#end();
    return v;
  }

  /** `view()` as the state's JSON (`stop_at` in RFC 3339). */
  viewJson(): string {
    const { stop_at: at, ...rest } = this.view();
    return JSON.stringify(at === undefined ? rest : { ...rest, stop_at: rfc3339(at) });
  }

  #idleMs(): number { return this.#port.idleSeconds * 1000; }

  /** When the run stops unless a reader comes: its idle time after the last demand, not before a waiting reader gave up. */
  #end(): number { return Math.max(this.#last + this.#idleMs(), this.#holdUntil); }

  #plan(at: number): void {
    this.#cancelTimer();
    const clock = this.#port.clock;
    this.#cancel = clock.setTimeout(() => {
      this.#cancel = undefined;
      this.#check();
    }, Math.max(0, at - clock.now()));
  }

  #check(): void {
    if (!this.#armed || !this.#running) return;
    const now = this.#port.clock.now();
    if (this.#port.attached() > 0) {
      this.#last = now;
      // the waiting readers came (or gave up): the idle time counts from the last one seen
      this.#holdUntil = 0;
      this.#plan(now + Math.min(RECHECK_MS, this.#idleMs()));
      return;
    }
    const end = this.#end();
    if (now < end) {
      this.#plan(end);
      return;
    }
    this.#running = false;
    this.#startedBy = undefined;
    this.#holdUntil = 0;
    this.#port.told('stop', 'idle', 0);
    // the waiting playlist goes up once ffmpeg wrote its last one, unless a reader came meanwhile
    void this.#port.stop().then(() => {
      if (this.#armed && !this.#running) this.#port.waiting();
    });
  }

  #cancelTimer(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }
}
