import type { PlaceholderRun, ProcessInfo, ProcessMetricsInfo, ProcessOrder, RunCredential } from '../../sdk/index.ts';
import { ACTIVE_STATES, Supervisor, type ExecState, type StateCause } from './supervisor/index.ts';
import { toApiConfig, type FullConfig } from './config-model.ts';
import { runFields, type Resolution } from './command.ts';
import { runMask } from './preauth.ts';
import type { RunMonitor } from './run-monitor-types.ts';
import type { ProcessConfig } from './schema.ts';
import { stateJson, type StateParts } from './json-write.ts';
import { budgetSubject, sameState, stateCounts, viewedCommand, type EntryEnv, type EntryTimes } from './entry-env.ts';
import { parseSchedule, rfc3339 } from './schedule.ts';
import { ScheduleRunner } from './schedule-runner.ts';
import { DemandRunner } from './demand-runner.ts';

export { budgetSubject, stateCounts, type EntryEnv, type EntryTimes } from './entry-env.ts';
const MIB = 1024 * 1024;

/**
 * One process: its definition (as given and resolved), its supervisor and what its stderr told
 * us. The API views are built from cached parts, so listing many processes stays cheap.
 */
export class ProcessEntry {
  readonly config: FullConfig;
  readonly apiConfig: ProcessConfig;
  readonly createdAt: number;
  updatedAt: number;
  order: ProcessOrder;
  /** Who made it and since when (`EntryTimes`): what its runs name is asked of it again at each start. */
  readonly maker: string | undefined;
  readonly makerSince: number;
  readonly monitor: RunMonitor;
  readonly #env: EntryEnv;
  readonly #supervisor: Supervisor;
  #resolution: Resolution | undefined;
  /** Why the definition cannot run; until the first refresh() nothing is known. */
  #invalid: string | undefined = 'not resolved yet';
  #command: string[] | null = null;
  #commandJson = 'null';
  #configJson: string | undefined;
  #exec: ExecState = 'finished';
  #outdated = false;
  #since: number;
  /** Entries into each state (`restream_process_states`). */
  readonly #entered = stateCounts();
  /** The last state JSON and what it was built from: a stopped process's state rarely changes. */
  #state: { parts: StateParts; json: string } | undefined;
  /** Set when the config has a valid `scheduler`: starts and stops the supervisor at its times. */
  readonly #schedule: ScheduleRunner | undefined;
  /** Set when the config has `ondemand.enable` (then `scheduler` is not used): runs it while read. */
  readonly #demand: DemandRunner | undefined;
  /** The credential of the current run, from its prepare until its child ended, and what it was resolved as. */
  #run: RunCredential | undefined;
  #runAs: Resolution | undefined;
  /** Its last run was ended, or its last start refused, for its maker: `recheckMaker` may start it again (`resume`: asked while that run still ended). */
  #heldForMaker: false | 'held' | 'resume' = false;
  /** The last run's credential hidden in its shown command and log lines (kept for its late lines). */
  #mask: ((text: string) => string) | undefined;

  constructor(config: FullConfig, times: EntryTimes, env: EntryEnv) {
    this.config = config;
    this.apiConfig = toApiConfig(config);
    this.createdAt = times.createdAt;
    this.updatedAt = times.updatedAt;
    this.order = times.order;
    this.maker = times.maker;
    this.makerSince = times.makerSince ?? times.updatedAt;
    this.#env = env;
    this.#since = env.now();
    this.monitor = env.monitor();
    const l = config.limits;
    this.#supervisor = new Supervisor({
      id: config.id, binary: env.binary, programDepth: env.programDepth,
      // its maker's folders only, by the kernel (what its command does not name is not reached either)
      spawn: env.spawn && ((b, a, o) => env.spawn!(b, a, { ...o, disk: env.makerDisk?.(this) })),
      prepare: () => this.#prepare(),
      admit: env.budget ? (cause, signal) => env.budget!.admit(budgetSubject(this), cause ?? 'start', signal) : undefined,
      reconnect: config.reconnect, reconnectDelaySeconds: config.reconnect_delay_seconds, staleTimeoutSeconds: config.stale_timeout_seconds,
      limits: { cpuUsage: l.cpu_usage * env.cpus, memoryBytes: l.memory_mbytes * MIB, waitforSeconds: l.waitfor_seconds },
      onLine: (line) => this.#onLine(line),
      onRunStart: () => this.monitor.runStart(),
      onRunEnd: (state, info) => {
        // the child is gone: its token opens nothing any more
        this.#endRun();
        if (info.reason) this.monitor.note(info.reason);
        this.monitor.runEnd(state);
        this.#demand?.ended();
      },
      onStateChange: (from, to, reason, cause) => this.#onState(from, to, reason, cause),
      log: env.log, sampler: env.sampler, pidFiles: env.pidFiles, now: env.now,
    });
    this.#demand = this.#demandRunner();
    this.#schedule = this.#demand ? undefined : this.#scheduleRunner();
  }

  #demandRunner(): DemandRunner | undefined {
    const d = this.#env.demand;
    if (!d || !this.config.ondemand.enable) return undefined;
    const idleSeconds = this.config.ondemand.idle_seconds || d.idleSeconds;
    const quiet = () => {};
    return new DemandRunner({
      clock: this.#env.clock, idleSeconds,
      start: () => { this.#supervisor.start('demand').catch(quiet); },
      stop: () => this.#supervisor.stop('idle').catch(quiet),
      attached: () => d.attached(this),
      viewers: () => d.viewers(this, idleSeconds * 1000),
      waiting: () => d.waiting(this),
      settled: () => !this.active && this.#supervisor.status().reconnectSeconds < 0,
      told: (action, reason, readers) => this.#env.hooks.onDemand.promise({ id: this.id, reference: this.reference, action, reason, readers })
        .catch((err: unknown) => this.#env.log.warn({ err, process: this.id }, 'onDemand tap failed')),
    });
  }

  /** Its child starts, runs or ends now. */
  get active(): boolean { return ACTIVE_STATES.has(this.#exec); }
  /** Whether it runs on demand (config `ondemand.enable` and an engine that serves demand). */
  get onDemand(): boolean { return this.#demand !== undefined; }
  /** An armed on-demand process that does not run: a demand would start it. */
  get demandWaiting(): boolean { return this.#demand !== undefined && this.#demand.armed && !this.#demand.running; }
  /** An armed on-demand process that a demand started (it starts or runs). */
  get demandRunning(): boolean { return this.#demand !== undefined && this.#demand.armed && this.#demand.running; }
  /** A reader asked for what it produces: an armed on-demand process starts (true when it counts);
   * `holdMs`: the reader waits that long for it to publish (no idle stop meanwhile). */
  demand(reason: string, holdMs = 0): boolean { return this.#demand?.demand(reason, holdMs) ?? false; }

  #scheduleRunner(): ScheduleRunner | undefined {
    const c = this.config;
    const s = c.scheduler ? parseSchedule(c.scheduler) : undefined;
    if (s === undefined || typeof s === 'string') return undefined;
    const quiet = () => {};
    return new ScheduleRunner(s, c.runtime_duration_seconds, {
      clock: this.#env.clock, since: this.updatedAt * 1000,
      start: () => { this.#supervisor.start('schedule').catch(quiet); },
      stop: () => { this.#supervisor.stop('duration').catch(quiet); },
      scheduled: (at) => {
        const hook = this.#env.hooks.onSchedule;
        if (!hook.taps.length) return;
        hook.promise({ id: this.id, reference: c.reference, nextRun: rfc3339(at) })
          .catch((err: unknown) => this.#env.log.warn({ err, process: this.id }, 'onSchedule tap failed'));
      },
    });
  }

  get id(): string { return this.config.id; }
  get reference(): string { return this.config.reference; }
  get domain(): string { return this.config.domain; }
  get valid(): boolean { return this.#invalid === undefined; }
  get invalidReason(): string | undefined { return this.#invalid; }
  get resolution(): Resolution | undefined { return this.#resolution; }
  /** The config as JSON, built once: it never changes for an entry (PUT makes a new one). */
  get configJson(): string { return (this.#configJson ??= JSON.stringify(this.apiConfig)); }

  /** Resolve again before the command is next shown (the port became known). */
  outdated(): void { this.#outdated = true; }

  /** Re-resolves placeholders and references; returns the reason when the definition is invalid now. */
  refresh(run?: PlaceholderRun): string | undefined {
    this.#outdated = false;
    const r = this.#env.resolve(this.config, run);
    if (typeof r === 'string') {
      // the report's log says why, once per reason (a listing re-resolves often)
      if (r !== this.#invalid) this.monitor.note(`invalid process definition: ${r}`);
      this.#invalid = r;
      this.#resolution = undefined;
      this.#setCommand(null);
      return r;
    }
    this.#invalid = undefined;
    this.#resolution = r;
    this.monitor.setIds(r.inputs.map((i) => i.id), r.outputs.map((o) => o.id));
    // a running process keeps showing the command it runs with
    if (!ACTIVE_STATES.has(this.#exec)) this.#setCommand(viewedCommand(this.#env, this.config, r.command));
    return undefined;
  }

  #setCommand(c: string[] | null): void { this.#command = c; this.#commandJson = JSON.stringify(c); }

  /** What it would run for `run` (a probe's own credential), leaving its shown command alone. */
  resolveFor(run?: PlaceholderRun): Resolution | string {
    return this.#env.resolve(this.config, run);
  }

  /** Runs it, or for a scheduled process waits for its times (and runs it now inside a window). */
  start(): Promise<void> {
    if (this.#demand) {
      this.#demand.arm();
      return Promise.resolve();
    }
    if (!this.#schedule) return this.#supervisor.start();
    this.#schedule.arm();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.#heldForMaker = false;
    this.#schedule?.disarm();
    this.#unarm();
    return this.#supervisor.stop();
  }

  #unarm(): void {
    if (!this.#demand?.armed) return;
    this.#demand.disarm();
    this.#env.demand?.unarmed(this);
  }

  /** A scheduled process comes back only inside its window; an on-demand one only while read. */
  async restart(): Promise<void> {
    if (this.#demand) {
      if (this.#demand.running) return this.#supervisor.restart();
      this.#demand.arm();
      return;
    }
    if (!this.#schedule) return this.#supervisor.restart();
    if (!this.#schedule.inWindow()) return;
    await this.#supervisor.restart();
    this.#schedule.arm();
  }

  async destroy(): Promise<void> {
    this.#heldForMaker = false;
    this.#schedule?.disarm();
    // not #unarm: a replacing entry puts its own waiting playlist up at once
    this.#demand?.disarm();
    await this.#supervisor.destroy();
    this.#endRun();
  }

  #endRun(): void {
    this.#run?.revoke();
    this.#run = this.#runAs = undefined;
  }

  /**
   * Runs before every spawn: a new run credential, fresh placeholders (the port is known by now)
   * resolved for it, then preStart. The credential is bound to the resolved command (what the
   * run may reach) and revoked when the run ends.
   */
  async #prepare(): Promise<string[]> {
    this.#endRun();
    const run = this.#env.runs?.issue(this.id);
    this.#run = run;
    this.#mask = run && runMask(run);
    const why = this.refresh(run);
    if (why !== undefined) throw new Error(`invalid process definition: ${why}`);
    // the run's own resolution (a listing or a probe resolves again meanwhile, without its token)
    const r = (this.#runAs = this.#resolution!);
    // asked before the credential opens anything (the uses are read off the resolved command), and again after preStart
    const refused = () => {
      const no = run && this.makerRefusal(r, run.token);
      this.#heldForMaker = no !== undefined && 'held';
      if (no !== undefined) throw new Error(`start refused: ${no}`);
    };
    refused();
    run?.bind(runFields(r));
    let args = [...r.command];
    const pre = this.#env.hooks.preStart;
    if (pre.taps.length) {
      const out = await pre.promise({ id: this.id, reference: this.config.reference, args });
      if (out?.veto) throw new Error(`start vetoed: ${out.veto}`);
      if (Array.isArray(out?.args)) args = out.args.map(String);
      refused();
    }
    this.#setCommand(this.#mask ? args.map(this.#mask) : args);
    return args;
  }

  /**
   * Asks its maker again (asked as at its start): a run it may no longer have is ended, with no
   * reconnect (`stopped`); a plain process (no schedule, no demand) still ordered to start whose run
   * or start its maker's refusal ended starts again once the maker may (`resumed`: asked at that start).
   */
  recheckMaker(mayResume = true): 'stopped' | 'resumed' | undefined {
    if (this.#exec === 'running') {
      const refused = this.#run && this.#runAs ? this.makerRefusal(this.#runAs, this.#run.token) : undefined;
      if (refused === undefined || !this.#supervisor.end('maker', `stopped: ${refused}`, false)) return undefined;
      this.#heldForMaker = 'held';
      return 'stopped';
    }
    if (!mayResume || !this.#heldForMaker || this.order !== 'start' || this.#demand || this.#schedule) return undefined;
    // the run it stopped is still ending (its grace): asked again once it has ended (#onState)
    if (this.active) this.#heldForMaker = 'resume';
    if (this.active || !(this.#env.makerMayRun?.(this) ?? true)) return undefined;
    this.#supervisor.start('maker').catch(() => {});
    return 'resumed';
  }

  /** Why a run resolved as `r` with `token` names what its maker may no longer do (`EntryEnv.makerRefusal`), or undefined. */
  makerRefusal(r: Resolution, token: string): string | undefined {
    return this.maker === undefined ? undefined : this.#env.makerRefusal?.(this.maker, this.id, r, token, this.makerSince);
  }

  #onLine(line: string): void {
    if (!this.monitor.line(this.#mask ? this.#mask(line) : line)) return;
    this.#supervisor.touch();
    const hook = this.#env.hooks.onProgress;
    if (hook.taps.length) {
      hook.promise({ id: this.id, reference: this.config.reference, progress: this.monitor.progressInfo() })
        .catch((err: unknown) => this.#env.log.warn({ err, process: this.id }, 'onProgress tap failed'));
    }
  }

  #onState(from: ExecState, to: ExecState, reason?: string, cause?: StateCause): void {
    this.#exec = to;
    // asked once, now that the stopped run ended (only where it is still owned, as `recheckMakers` asks)
    if (this.#heldForMaker === 'resume' && !ACTIVE_STATES.has(to)) {
      this.#heldForMaker = 'held';
      setImmediate(() => {
        try { this.recheckMaker(this.#env.owns?.(this.id) ?? true); } catch (err) { this.#env.log.warn({ err, process: this.id }, 'maker recheck failed'); }
      });
    }
    this.#since = this.#env.now();
    this.#entered[to]++;
    if (this.#env.stateEntries) this.#env.stateEntries[to]++;
    const hook = this.#env.hooks.onStateChange;
    if (hook.taps.length) {
      hook.promise({ id: this.id, reference: this.config.reference, from, to, reason, cause, lastLogline: this.monitor.lastLogline() })
        .catch((err: unknown) => this.#env.log.warn({ err, process: this.id }, 'onStateChange tap failed'));
    }
  }

  /** Whole seconds of the current run; 0 unless running (a finished process's clock does not tick). */
  runtimeSeconds(): number {
    if (this.#exec !== 'running') return 0;
    return Math.max(0, Math.floor((this.#env.now() - this.#since) / 1000));
  }

  /**
   * The API's ProcessState (reference 5.6). A definition that does not resolve keeps its order
   * and shows `failed` with the reason as its last log line (the reference's all-empty state
   * would not say why a restored process does not run).
   */
  stateJson(): string {
    const parts = this.#stateParts();
    if (!this.#state || !sameState(this.#state.parts, parts)) this.#state = { parts, json: stateJson(parts) };
    return this.#state.json;
  }

  #stateParts(): StateParts {
    if (this.#outdated) this.refresh();
    if (!this.valid) {
      return {
        order: this.order, exec: 'failed', runtimeSeconds: 0, reconnectSeconds: -1,
        lastLogline: `invalid process definition: ${this.#invalid}`, progress: this.monitor.progressJson(),
        memoryBytes: 0, cpuUsage: 0, command: 'null',
      };
    }
    const s = this.#supervisor.status();
    return {
      order: this.order,
      exec: this.#exec,
      runtimeSeconds: this.runtimeSeconds(),
      reconnectSeconds: s.reconnectSeconds < 0 ? -1 : Math.floor(s.reconnectSeconds),
      lastLogline: this.monitor.lastLogline(),
      progress: this.monitor.progressJson(),
      memoryBytes: s.memoryBytes,
      cpuUsage: s.cpuUsage / this.#env.cpus,
      command: this.#commandJson,
      nextRun: this.#nextRun(),
      ondemand: this.#demand?.viewJson(),
    };
  }

  /** The next start of a scheduled process with order `start`. */
  #nextRun(): string | undefined {
    const at = this.#schedule?.nextRun;
    return at === undefined ? undefined : rfc3339(at);
  }

  /** The figures of the metrics plugin (sdk ProcessMetricsInfo); the stream objects are the live ones. */
  metricsInfo(): ProcessMetricsInfo {
    const s = this.#supervisor.status();
    const p = this.monitor.progress();
    const l = this.config.limits;
    return {
      exec: this.valid ? this.#exec : 'failed',
      order: this.order,
      stateSeconds: Math.max(0, Math.floor((this.#env.now() - this.#since) / 1000)),
      cpu: s.cpuUsage / this.#env.cpus,
      memoryBytes: s.memoryBytes,
      cpuLimit: l.cpu_usage,
      memoryLimitBytes: l.memory_mbytes * MIB,
      progress: this.monitor.progressInfo(),
      q: p.q,
      inputs: p.inputs,
      outputs: p.outputs,
      states: this.#entered,
    };
  }

  /** What other plugins see (sdk ProcessInfo). */
  info(): ProcessInfo {
    if (this.#outdated) this.refresh();
    const c = this.config;
    return {
      id: c.id, type: c.type, reference: c.reference, createdAt: this.createdAt, updatedAt: this.updatedAt,
      order: this.order, exec: this.valid ? this.#exec : 'failed', runtimeSeconds: this.runtimeSeconds(), valid: this.valid,
      inputs: c.input, outputs: c.output, command: this.#command ?? undefined, owner: c.owner, domain: c.domain,
    };
  }
}
