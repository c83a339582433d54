import { createServiceRef } from './refs.ts';
import { createHooksRef, AsyncParallelHook, AsyncSeriesBailHook, AsyncSeriesWaterfallHook, SyncWaterfallHook } from './hooks.ts';
import type { ApiProbe, ApiProcess } from './process-views.ts';
import type { RunUse } from './run-credentials.ts';
import type { ChildSpawnOptions } from './children.ts';

/** What ffmpeg is doing right now (reference 7.1). */
export type ProcessExecState = 'finished' | 'starting' | 'running' | 'finishing' | 'failed' | 'killed';
/** What the user asked for: run it or not (reference 7.2). */
export type ProcessOrder = 'start' | 'stop';

/** One input or output of a process, as configured (placeholders unresolved). */
interface ProcessIOInfo {
  id: string;
  address: string;
  options: readonly string[];
}

/** A process as other plugins see it: cheap to build, no logs. */
export interface ProcessInfo {
  id: string;
  /** `encoder` or `ffmpeg`, as the user gave it. */
  type: string;
  reference: string;
  /** Unix seconds. */
  createdAt: number;
  updatedAt: number;
  order: ProcessOrder;
  /** Empty for a process whose stored definition is invalid. */
  exec: ProcessExecState | '';
  /** Seconds since the last state change (the uptime while running). */
  runtimeSeconds: number;
  /** False when the stored definition failed validation; such a process cannot start. */
  valid: boolean;
  inputs: readonly ProcessIOInfo[];
  outputs: readonly ProcessIOInfo[];
  /** The resolved arguments of the last (or next) run, without the binary; undefined when invalid. */
  command?: readonly string[];
  /** Who it belongs to and its IAM domain, as its config gives them ('' = none). */
  owner: string;
  domain: string;
}

/** The figures of the current run; zeros when not running. */
export interface ProcessProgressInfo {
  frame: number;
  packet: number;
  /** Frames per second over a sliding window. */
  fps: number;
  /** Output bitrate in kbit/s (bit/s / 1024) over a sliding window. */
  bitrateKbit: number;
  sizeKb: number;
  /** Output timestamp in seconds. */
  time: number;
  speed: number;
  drop: number;
  dup: number;
}

/** Counts per exec state (entries into a state, or processes now in it); every state present. */
export type ProcessStateCounts = Readonly<Record<ProcessExecState, number>>;

/**
 * One stream of one input or output of the current run, as the API's Progress shows it
 * (reference 5.6; wire names, handed over without copying, so read it, never keep it).
 */
export interface ProcessStreamProgress {
  readonly id: string;
  readonly address: string;
  readonly index: number;
  readonly stream: number;
  /** Media: `video`, `audio`, ... */
  readonly type: string;
  readonly frame: number;
  readonly fps: number;
  readonly packet: number;
  readonly pps: number;
  readonly size_kb: number;
  readonly bitrate_kbit: number;
  readonly q: number;
  readonly avstream: null | {
    readonly queue: number; readonly dup: number; readonly drop: number; readonly enc: number;
    readonly looping: boolean; readonly duplicating: boolean;
  };
}

/** What the metrics of one process are made of (reference 12.4 `restream_*`); read-only. */
export interface ProcessMetricsInfo {
  exec: ProcessExecState;
  order: ProcessOrder;
  /** Seconds in the current exec state. */
  stateSeconds: number;
  /** Percent of the whole machine (all cores = 100), and bytes RSS; 0 when not running. */
  cpu: number;
  memoryBytes: number;
  /** Configured limits: percent of the whole machine and bytes; 0 = none. */
  cpuLimit: number;
  memoryLimitBytes: number;
  progress: ProcessProgressInfo;
  /** Quality of the first output stream (the stats line's `q`). */
  q: number;
  inputs: readonly ProcessStreamProgress[];
  outputs: readonly ProcessStreamProgress[];
  /** Entries into each exec state since this process was created (or restored). */
  states: ProcessStateCounts;
}

/**
 * The process engine as a service (provided by the core).
 *
 * @example
 * deps: { processes: processesRef },
 * setup(ctx) {
 *   const p = ctx.deps.processes.get('ingest');
 *   if (p?.exec === 'running') ctx.log.info({ uptime: p.runtimeSeconds }, 'up');
 * }
 */
export interface ProcessesService {
  /** Every process, in no particular order. */
  list(): ProcessInfo[];
  get(id: string): ProcessInfo | undefined;
  /** The figures of the current run, or undefined for an unknown process. */
  progress(id: string): ProcessProgressInfo | undefined;
  /** The process's metadata value under `key` (undefined when absent). */
  metadata(id: string, key: string): unknown;
  /** Figures for the metrics of one process, or undefined for an unknown process. */
  metrics(id: string): ProcessMetricsInfo | undefined;
  /** Entries into each exec state by any process since the engine started (`ffmpeg_process`). */
  stateEntries(): ProcessStateCounts;
  /**
   * The process exactly as `GET /api/v3/process/{id}?filter=...` answers it (reference 5.3), read
   * from the same cached JSON as the route; undefined for an unknown id. `filter` is the route's
   * (absent or empty = config, state, report and metadata). The object is shared: never change it.
   */
  view(id: string, filter?: string): ApiProcess | undefined;
  /** Every process as `GET /api/v3/process?filter=...` lists them, in the same order, in one read. */
  views(filter?: string): ApiProcess[];
  /**
   * What `GET /api/v3/process/{id}/probe` answers: the encoder run on the inputs (reference 4.4.10,
   * 5.8). Never fails: an unknown id or an unresolvable definition says so in `log`.
   */
  probe(id: string): Promise<ApiProbe>;
  /**
   * Why `address` is refused as a source, or undefined: the rule process inputs meet
   * (`encoder.access.input.allow/block`, a URL that must parse; for `playout:<url>` the URL behind
   * the prefix as well). Every other way a source enters (the playout plugin's playlist items,
   * stream switches) asks here, so there is one rule. A local file is given as its absolute path.
   */
  inputProblem(address: string): string | undefined;
  /**
   * Whether process `id`'s maker (the caller of its last create or update, when an access plugin
   * decided it) may still have it do `use`, asked now of `httpHooksRef.processUseBy`: for what a
   * plugin reads or writes on a running process's behalf after its start (a `playlist:` item, the
   * files an item's playlist names). True for a process without a maker, or when no plugin decides;
   * false for an unknown id.
   */
  makerMay(id: string, use: RunUse): boolean;
  /**
   * What of the disk folder a child started on process `id`'s behalf may reach: its maker's
   * folders, as its own runs do (`ChildSpawnOptions.disk`, from `httpHooksRef.makerFolders`), for
   * a plugin that runs ffmpeg for it (the playout's relays), or for `{ maker, since }` (an API caller now: the playlists' probe). Undefined: all of it (no maker, no
   * access plugin, a superuser's, an unknown id).
   */
  makerDisk(of: string | { maker: string; since: number }): ChildSpawnOptions['disk'];
  /**
   * Asks the maker of every running process again about its current run (what its command names,
   * as at its start): a run whose maker may no longer have it do all of it is stopped (cause
   * `maker`, the reason in its state, no reconnect; the order stays, so its next start is asked
   * again and, still refused, fails). A process without a schedule or demand, ordered to start,
   * that such a stop or a refused start ended starts again (cause `maker`) once its maker may. For
   * an access plugin whose users or policies changed; how many were stopped or started again.
   */
  recheckMakers(): number;
  /**
   * The video codecs and their encoders of the encoder's skills (`GET /api/v3/skills`, detected on
   * first use), for choosing an encoder: the toolkit's `pickEncoder(skills, 'auto', presentDevices())`
   * takes a hardware one (`h264_nvenc`, `h264_qsv`, `h264_vaapi`) whose device is present, else
   * `libx264`. Undefined when the encoder cannot be run.
   */
  encoderSkills(): Promise<{ codecs: { video: ReadonlyArray<{ id: string; encoders: readonly string[] | null }> } } | undefined>;
  /**
   * Adds the process, or replaces the one with its id when the definition differs (as `POST` or
   * `PUT /api/v3/process` would, with every check, `preSave` and the save to db.json before it
   * resolves); an unchanged definition leaves the process (and its run) alone. Throws the API's
   * ApiError (400) when the definition is refused. For plugins that own processes (`ladders`).
   * `maker`: the user the plugin acts for (the `request.auth.user` of the request that asked for
   * what the process does), kept as the process's maker: under an access plugin the definition is
   * refused (ApiError 403 `PROCESS_FORBIDDEN_USE`) when it names a use its maker may not have, and
   * each start asks again (as for a process that user made through the API). `since`: when that
   * request was made (unix seconds, default now): the user that had the maker's name then is asked
   * (renamed since, or the name given to another user later). Without a maker the process is the
   * plugin's own (the operator's config), held to no user's policies; a different maker or since
   * counts as a change.
   */
  put(definition: ProcessDefinition, maker?: string, since?: number): Promise<'added' | 'replaced' | 'unchanged'>;
  /** Deletes the process as `DELETE /api/v3/process/{id}` does; false when there is none. */
  remove(id: string): Promise<boolean>;
}

/** A process as a plugin defines it (`ProcessesService.put`): the API's ProcessConfig, every field given. */
interface ProcessDefinition {
  id: string;
  reference: string;
  input: readonly { id: string; address: string; options: readonly string[] }[];
  output: readonly { id: string; address: string; options: readonly string[] }[];
  options: readonly string[];
  reconnect: boolean;
  reconnect_delay_seconds: number;
  autostart: boolean;
  stale_timeout_seconds: number;
  limits: { cpu_usage: number; memory_mbytes: number; waitfor_seconds: number };
  ondemand?: { enable: boolean; idle_seconds: number };
}

/**
 * The process engine's service ref (single provider: the core).
 *
 * @example
 * deps: { processes: processesRef },
 * setup(ctx) { const ids = ctx.deps.processes.list().map((p) => p.id); }
 */
export const processesRef = createServiceRef<ProcessesService>('processes');

/** The value `preStart` taps pass along: they may rewrite `args` or set `veto`. */
export interface ProcessPreStart {
  readonly id: string;
  readonly reference: string;
  /** The resolved arguments (without the binary). A tap returns the object with new args to rewrite them. */
  args: string[];
  /** A reason set by a tap forbids this start; it shows in the process report and the run ends `failed`. */
  veto?: string;
}

/** A process moved from one exec state to another (`onStateChange`). */
export interface ProcessStateEvent {
  id: string;
  reference: string;
  from: ProcessExecState;
  to: ProcessExecState;
  /** Why the supervisor moved (stale, limit, veto, spawn error, `reconnect`), when it did. */
  reason?: string;
  /** Which of the supervisor's own decisions moved it, when one did. */
  cause?: ProcessStateCause;
  /** The process's last log line at the time of the change (empty when it has none). */
  lastLogline?: string;
}

/**
 * Why the supervisor moved a process by itself: `reconnect` (a start after a run ended, per
 * `reconnect`), `stale` (no progress for `stale_timeout_seconds`), `limit` (cpu or memory over
 * its limit), `prepare` (the definition did not resolve, a `preStart` tap vetoed, or its maker may
 * no longer do what it names: `httpHooksRef.processUseBy`), `spawn` (the
 * binary could not be started), `schedule` (a start at a time of its `scheduler`), `duration` (a
 * stop after `runtime_duration_seconds`; the order stays `start`), `demand` (an on-demand process
 * started for its first reader), `idle` (an on-demand process stopped after its last reader left),
 * `budget` (a start that waited for the resource budget, `resources.*`, and did not get under it),
 * `maker` (a running process stopped because its maker may no longer do what its run names, or
 * started again once it may: `ProcessesService.recheckMakers`, after an access plugin's users or
 * policies changed).
 */
export type ProcessStateCause = 'reconnect' | 'stale' | 'limit' | 'prepare' | 'spawn' | 'schedule' | 'duration' | 'demand' | 'idle' | 'budget' | 'maker';

/**
 * A start met the resource budget (`resources.max_cpu_usage` / `max_memory_usage`, `onBudget`):
 * it waits for the machine to get under it, or it was refused.
 */
interface ProcessBudgetEvent {
  id: string;
  reference: string;
  /** `wait`: a start the engine made waits (at most `resources.wait_seconds`); `refuse`: it does not start. */
  action: 'wait' | 'refuse';
  /** What started it: `start` (the command), `autostart`, `restart`, `reconnect`, `schedule`, `demand`. */
  start: string;
  /** Which limit and the figures, e.g. `memory 93.1 % + 0.0 % > 90 %`. */
  reason: string;
}


/**
 * An on-demand process (config `ondemand.enable`) started for a reader or stopped after its last
 * reader left (`onDemand`).
 */
interface ProcessDemandEvent {
  id: string;
  reference: string;
  /** `start`: a reader asked while it waited; `stop`: no reader for its idle time. */
  action: 'start' | 'stop';
  /** What asked (`hls`, `stream`) for a start; `idle` for a stop. */
  reason: string;
  /** Readers at the time (HLS viewers seen within the idle time plus stream readers). */
  readers: number;
}

/** A scheduled process waits for its next start (`onSchedule`). */
interface ProcessScheduleEvent {
  id: string;
  reference: string;
  /** The next start, RFC 3339 in UTC. */
  nextRun: string;
}

/** A process was added or replaced (`onAdd`, `onUpdate`), once its definition is on disk. */
export interface ProcessChangeEvent {
  id: string;
  reference: string;
  /** For `onUpdate`: the id before the change (a PUT may rename a process). */
  previousId?: string;
}

/** New progress figures of a running process (`onProgress`, about twice a second). */
interface ProcessProgressEvent {
  id: string;
  reference: string;
  progress: ProcessProgressInfo;
}

/**
 * A process about to be saved by `POST` or `PUT` (`preSave`), after the engine's own checks. A tap
 * returns a reason to refuse it (the API answers 400 with that reason) or nothing to let it pass;
 * it may reserve what the process will need (ports), released in `onDelete` or the next `preSave`.
 */
export interface ProcessPreSave {
  readonly id: string;
  /** For `PUT`: the id before the change (a PUT may rename a process). */
  readonly previousId?: string;
  readonly reference: string;
  /** As configured (placeholders unresolved). */
  readonly inputs: readonly ProcessIOInfo[];
  readonly outputs: readonly ProcessIOInfo[];
}

/**
 * The command a process that is not running shows in `state.command` (`viewCommand`): what it
 * would run with. A tap that rewrites `args` in `preStart` rewrites them here the same way, without
 * I/O (it runs while a state is read), so the API shows the command before the first start.
 */
export interface ProcessCommandView {
  readonly id: string;
  readonly reference: string;
  /** As configured (placeholders unresolved), in the order of the command's inputs. */
  readonly inputs: readonly ProcessIOInfo[];
  /** The resolved command; a tap replaces it. */
  args: string[];
}

/** A process was deleted; its files marked `purge_on_delete` are gone already (`onDelete`). */
interface ProcessDeleteEvent {
  id: string;
  reference: string;
}

/**
 * Hooks of the process engine. `preSave` may refuse an add or update with a reason; `preStart`
 * runs before every spawn (start, reconnect, restart) and `viewCommand` shows its rewrite on a
 * process that is not running; the `on*` hooks only notify and never hold the engine up.
 *
 * @example
 * ctx.hooks.tap(processHooksRef, 'preStart', async (p) => {
 *   if (p.reference === 'blocked') p.veto = 'reference is blocked';
 *   else p.args = ['-loglevel', 'warning', ...p.args];
 *   return p;
 * });
 */
export const processHooksRef = createHooksRef('process', () => ({
  preSave: new AsyncSeriesBailHook<[ProcessPreSave], string | undefined>(['process']),
  preStart: new AsyncSeriesWaterfallHook<[ProcessPreStart]>(['start']),
  viewCommand: new SyncWaterfallHook<[ProcessCommandView]>(['view']),
  onStateChange: new AsyncParallelHook<[ProcessStateEvent]>(['event']),
  onProgress: new AsyncParallelHook<[ProcessProgressEvent]>(['event']),
  onDelete: new AsyncParallelHook<[ProcessDeleteEvent]>(['event']),
  onAdd: new AsyncParallelHook<[ProcessChangeEvent]>(['event']),
  onUpdate: new AsyncParallelHook<[ProcessChangeEvent]>(['event']),
  onSchedule: new AsyncParallelHook<[ProcessScheduleEvent]>(['event']),
  onDemand: new AsyncParallelHook<[ProcessDemandEvent]>(['event']),
  onBudget: new AsyncParallelHook<[ProcessBudgetEvent]>(['event']),
}));

/**
 * What a process's state (`GET /api/v3/process/{id}/state`) gets beyond the reference's fields:
 * members by name, appended to its JSON object in order (`id` says which process; a member left
 * `undefined` is not sent). A plugin that keeps per-process state adds its member here.
 */
export interface ProcessStateExtras {
  readonly id: string;
  [member: string]: unknown;
}

/**
 * Fields the process engine adds to a process's state, called by the engine on each state read
 * (synchronous, no I/O); each tap sets its own member and returns the object.
 *
 * @example
 * ctx.hooks.tap(stateExtrasRef, 'view', (v) => { v.vendor_note = notes.get(v.id); return v; });
 */
export const stateExtrasRef = createHooksRef('process.state-extras', () => ({
  view: new SyncWaterfallHook<[ProcessStateExtras]>(['view']),
}));
