import type { Logger } from 'pino';
import { ChildRun, type RunExit } from './child-run.ts';
import { canTransition, exitState, type ExecState } from './exit-state.ts';
import { LimitWatch } from './limit-watch.ts';
import type { RunEndInfo, Sampler, StateCause, SupervisorOptions, SupervisorStatus } from './types.ts';
import { UsageSampler } from './usage-sampler.ts';

/**
 * Keeps one program running as asked (reference 7.1-7.4): spawns it, reads its stderr, stops it
 * with SIGINT then SIGKILL, restarts it after a crash, and kills it when it hangs (stale) or
 * exceeds a limit. Commands are serialised, so a stop issued while a start is still preparing
 * wins without a race; the reconnect and grace timers exist only while they are pending, and the
 * periodic work (usage, limits, stale) rides on the shared sampler's single timer.
 */
export class Supervisor {
  readonly #opts: SupervisorOptions;
  #logger: Logger | undefined;
  readonly #now: () => number;
  readonly #sampler: Sampler;
  readonly #ownSampler: boolean;
  readonly #graceMs: number;
  readonly #minRespawnMs: number;
  readonly #limitWatch = new LimitWatch();
  #state: ExecState = 'finished';
  #queue: Promise<void> = Promise.resolve();
  #run: ChildRun | undefined;
  #runEnded: Promise<void> = Promise.resolve();
  #unwatch: (() => void) | undefined;
  /** The owner wants the program running (start/restart since the last stop). */
  #wanted = false;
  #destroyed: Promise<void> | undefined;
  /** The current run is being ended by stop(): no reconnect afterwards. */
  #stopRequested = false;
  /** Why the supervisor is ending the current run itself (stale, limit); the run then ends `killed`. */
  #killReason: string | undefined;
  #killCause: StateCause | undefined;
  /** The supervisor ends the current run itself and no reconnect follows (`end(..., false)`). */
  #noReconnect = false;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #reconnectAt = -1;
  #attemptAt = -Infinity;
  #spawnedAt = 0;
  #lastProgress = 0;
  #cpu = 0;
  #mem = 0;
  #lastReason: string | undefined;
  /** Calls off a start that waits for admission (`admit`), on stop and destroy. */
  #admitting: AbortController | undefined;
  /** Settles once a start that waits for admission went on (queued) or ended. */
  #admission: Promise<void> | undefined;

  constructor(opts: SupervisorOptions) {
    this.#opts = opts;

    this.#now = opts.now ?? Date.now;
    this.#ownSampler = opts.sampler === undefined;
    this.#sampler = opts.sampler ?? new UsageSampler();
    this.#graceMs = opts.stopGraceMs ?? 5000;
    this.#minRespawnMs = opts.minRespawnIntervalMs ?? 1000;
  }

  /** The process's child logger, made when first used: most stored processes never log (a start with thousands made them all). */
  get #log(): Logger | undefined {
    return (this.#logger ??= this.#opts.log?.child({ process: this.#opts.id }));
  }

  /**
   * Starts a run unless one is active; idempotent. Clears any pending reconnect first. `cause`
   * (`schedule`) says who asked, for the state event.
   */
  start(cause?: StateCause): Promise<void> {
    if (this.#destroyed) return Promise.resolve();
    this.#wanted = true;
    this.#cancelReconnect();
    return this.#enqueue(() => this.#startRun(cause));
  }

  /**
   * SIGINT, then SIGKILL after the grace; resolves once the child has exited. Cancels pending
   * reconnects, and none follows. `cause` (`duration`) says who asked, for the state event.
   */
  stop(cause?: StateCause): Promise<void> {
    this.#wanted = false;
    this.#cancelReconnect();
    this.#admitting?.abort();
    return this.#enqueue(() => this.#stopRun(cause));
  }

  /** Stop (if running) then start, whether or not `reconnect` is set. */
  restart(): Promise<void> {
    if (this.#destroyed) return Promise.resolve();
    this.#wanted = true;
    this.#cancelReconnect();
    return this.#enqueue(async () => {
      await this.#stopRun();
      await this.#startRun();
    });
  }

  /** Tells the stale watchdog that the child made progress. */
  touch(): void {
    this.#lastProgress = this.#now();
  }

  status(): SupervisorStatus {
    const now = this.#now();
    const live = this.#state === 'running' || this.#state === 'finishing';
    return {
      state: this.#state,
      pid: this.#run?.pid,
      runtimeSeconds: live ? Math.max(0, now - this.#spawnedAt) / 1000 : 0,
      reconnectSeconds: this.#reconnectTimer ? Math.max(0, this.#reconnectAt - now) / 1000 : -1,
      cpuUsage: live ? this.#cpu : 0,
      memoryBytes: live ? this.#mem : 0,
      lastReason: this.#lastReason,
    };
  }

  /** Stops the child and every timer for good (delete, app close). Idempotent. */
  destroy(): Promise<void> {
    this.#destroyed ??= (async () => {
      this.#wanted = false;
      this.#cancelReconnect();
      this.#admitting?.abort();
      await this.#enqueue(() => this.#stopRun());
      if (this.#ownSampler) this.#sampler.close();
    })();
    return this.#destroyed;
  }

  #enqueue(fn: () => Promise<void>): Promise<void> {
    const p = this.#queue.then(fn);
    this.#queue = p.catch((err: unknown) => this.#log?.error({ err }, 'supervisor command failed'));
    return p;
  }

  /** `cause` is set when the supervisor starts on its own (a reconnect), for the state event. */
  async #startRun(cause?: StateCause): Promise<void> {
    if (this.#destroyed || !this.#wanted || this.#run || this.#admitting || this.#admission) return;
    this.#cancelReconnect();
    this.#stopRequested = false;
    this.#killReason = undefined;
    this.#killCause = undefined;
    this.#noReconnect = false;
    this.#attemptAt = this.#now();
    this.#transition('starting', cause, cause);
    this.#call('onRunStart', () => this.#opts.onRunStart?.());
    if (this.#admitted(cause)) await this.#launch();
  }

  /** The rest of a start once admitted: prepare, then spawn. */
  async #launch(): Promise<void> {
    let args: string[];
    try {
      args = await this.#opts.prepare();
    } catch (err) {
      // A veto is deliberate: retrying would only repeat it, so no reconnect.
      const reason = err instanceof Error ? err.message : String(err);
      this.#endWithoutChild('failed', reason, 'prepare');
      return;
    }
    if (this.#destroyed || !this.#wanted) {
      this.#transition('finishing');
      this.#endWithoutChild('finished', undefined);
      return;
    }
    let run: ChildRun;
    try {
      run = new ChildRun(this.#opts.binary, args, this.#opts.env ?? {}, this.#onLine, this.#opts.spawn);
    } catch (err) {
      this.#endWithoutChild('failed', `cannot start ${this.#opts.binary}: ${(err as Error).message}`, 'spawn');
      this.#maybeReconnect();
      return;
    }
    this.#run = run;
    this.#runEnded = run.exited.then((exit) => this.#onExit(run, exit));
    if (run.pid === undefined) return; // the spawn error arrives as exit.error
    this.#spawnedAt = this.#now();
    this.#lastProgress = this.#spawnedAt;
    this.#cpu = 0;
    this.#mem = 0;
    this.#limitWatch.reset();
    this.#opts.pidFiles?.record(this.#opts.id, run.pid, this.#opts.binary, args);
    this.#unwatch = this.#sampler.watch(run.pid, this.#onSample, this.#opts.programDepth ?? 0);
    this.#log?.info({ pid: run.pid }, 'process spawned');
    this.#transition('running');
  }

  /**
   * Asks `admit` (the resource budget). At once: go ahead (true) or refused. A wait happens outside
   * the command queue, so the start answers with `starting` and a stop is not held up: it calls
   * the wait off; an admitted wait queues the rest of the start (`#launch`).
   */
  #admitted(cause: StateCause | undefined): boolean {
    const ac = new AbortController();
    const verdict = this.#opts.admit?.(cause, ac.signal);
    if (verdict === undefined) return true;
    if (typeof verdict === 'string') {
      this.#refused(verdict);
      return false;
    }
    this.#admitting = ac;
    this.#admission = verdict.then((why) => {
      this.#admitting = undefined;
      this.#admission = undefined;
      if (ac.signal.aborted || this.#destroyed || !this.#wanted) return this.#calledOff();
      this.#enqueue(async () => {
        if (this.#destroyed || !this.#wanted) return this.#calledOff();
        if (why === undefined) return this.#launch();
        this.#refused(why);
      }).catch(() => {});
    }, () => this.#calledOff());
    return false;
  }

  #refused(why: string): void {
    this.#endWithoutChild('failed', why, 'budget');
    this.#maybeReconnect();
  }

  #calledOff(): void {
    this.#transition('finishing');
    this.#endWithoutChild('finished', undefined);
  }

  async #stopRun(cause?: StateCause): Promise<void> {
    if (this.#admission) {
      this.#admitting?.abort();
      await this.#admission;
    }
    const run = this.#run;
    if (!run) return;
    this.#stopRequested = true;
    this.#transition('finishing', cause, cause);
    run.interrupt(this.#graceMs);
    await this.#runEnded;
  }

  /**
   * Ends the running child for `cause` (the process's state says `reason`); the order stays, so
   * reconnect rules apply unless `reconnect` is false (the owner starts it again). Whether one ran.
   */
  end(cause: StateCause, reason: string, reconnect = true): boolean {
    const ended = this.#kill(cause, reason);
    if (ended && !reconnect) this.#noReconnect = true;
    return ended;
  }

  /** The supervisor ends the run itself; the order stays, so reconnect rules apply. */
  #kill(cause: StateCause, reason: string): boolean {
    const run = this.#run;
    if (!run || this.#state !== 'running') return false;
    this.#log?.warn({ pid: run.pid, reason }, 'stopping process');
    this.#killReason = reason;
    this.#killCause = cause;
    this.#transition('finishing', reason, cause);
    run.interrupt(this.#graceMs);
    return true;
  }

  #onExit(run: ChildRun, exit: RunExit): void {
    if (this.#run !== run) return;
    this.#run = undefined;
    if (run.pid !== undefined) this.#opts.pidFiles?.forget(this.#opts.id, run.pid);
    this.#unwatch?.();
    this.#unwatch = undefined;
    this.#cpu = 0;
    this.#mem = 0;
    let state: ExecState;
    let reason: string | undefined;
    let cause: StateCause | undefined;
    if (exit.error) {
      state = 'failed';
      reason = `cannot start ${this.#opts.binary}: ${exit.error.message}`;
      cause = 'spawn';
    } else if (this.#killReason !== undefined) {
      state = 'killed';
      reason = this.#killReason;
      cause = this.#killCause;
    } else {
      state = exitState(exit.exitCode, exit.signal);
    }
    this.#log?.info({ pid: run.pid, exitCode: exit.exitCode, signal: exit.signal, state, reason }, 'process ended');
    this.#lastReason = reason;
    this.#transition(state, reason, cause);
    this.#call('onRunEnd', () => this.#opts.onRunEnd?.(state, { exitCode: exit.exitCode, signal: exit.signal, reason }));
    if (!this.#stopRequested && !this.#noReconnect) this.#maybeReconnect();
  }

  #endWithoutChild(state: ExecState, reason: string | undefined, cause?: StateCause): void {
    this.#lastReason = reason;
    this.#transition(state, reason, cause);
    const info: RunEndInfo = { exitCode: null, signal: null, reason };
    this.#call('onRunEnd', () => this.#opts.onRunEnd?.(state, info));
  }

  #maybeReconnect(): void {
    if (this.#destroyed || !this.#wanted || !this.#opts.reconnect || this.#reconnectTimer) return;
    const now = this.#now();
    const delay = Math.max(this.#opts.reconnectDelaySeconds * 1000, this.#minRespawnMs - (now - this.#attemptAt), 0);
    this.#reconnectAt = now + delay;
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = undefined;
      this.#reconnectAt = -1;
      this.#enqueue(() => this.#startRun('reconnect')).catch(() => {});
    }, delay);
  }

  #cancelReconnect(): void {
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
    this.#reconnectAt = -1;
  }

  // Bound once: these run per line / per tick and must not allocate closures.
  readonly #onLine = (line: string): void => {
    try {
      this.#opts.onLine(line);
    } catch (err) {
      this.#log?.error({ err }, 'onLine failed');
    }
  };

  readonly #onSample = (cpu: number, mem: number): void => {
    if (this.#state !== 'running') return;
    if (cpu >= 0) this.#cpu = cpu;
    if (mem >= 0) this.#mem = mem;
    const now = this.#now();
    const over = this.#limitWatch.check(this.#opts.limits, cpu, mem, now);
    if (over !== undefined) {
      this.#kill('limit', over);
      return;
    }
    const stale = this.#opts.staleTimeoutSeconds;
    if (stale > 0 && now - this.#lastProgress > stale * 1000) this.#kill('stale', `stale timeout: no progress for ${stale} s`);
  };

  #transition(to: ExecState, reason?: string, cause?: StateCause): void {
    const from = this.#state;
    if (from === to) return;
    if (!canTransition(from, to)) {
      this.#log?.debug({ from, to }, 'ignored state transition');
      return;
    }
    this.#state = to;
    this.#call('onStateChange', () => this.#opts.onStateChange?.(from, to, reason, cause));
  }

  #call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log?.error({ err }, `${what} failed`);
    }
  }
}
