import { createServiceRef } from './refs.ts';
import { createHooksRef, AsyncParallelHook, AsyncSeriesWaterfallHook } from './hooks.ts';

/** What ffmpeg is doing right now (reference 7.1). */
export type ProcessExecState = 'finished' | 'starting' | 'running' | 'finishing' | 'failed' | 'killed';
/** What the user asked for: run it or not (reference 7.2). */
export type ProcessOrder = 'start' | 'stop';

/** One input or output of a process, as configured (placeholders unresolved). */
export interface ProcessIOInfo {
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
  /** Why the supervisor moved (stale, limit, veto, spawn error), when it did. */
  reason?: string;
}

/** New progress figures of a running process (`onProgress`, about twice a second). */
export interface ProcessProgressEvent {
  id: string;
  reference: string;
  progress: ProcessProgressInfo;
}

/** A process was deleted; its files marked `purge_on_delete` are gone already (`onDelete`). */
export interface ProcessDeleteEvent {
  id: string;
  reference: string;
}

/**
 * Hooks of the process engine. `preStart` runs before every spawn (start, reconnect, restart);
 * the `on*` hooks only notify and never hold the engine up.
 *
 * @example
 * ctx.hooks.tap(processHooksRef, 'preStart', async (p) => {
 *   if (p.reference === 'blocked') p.veto = 'reference is blocked';
 *   else p.args = ['-loglevel', 'warning', ...p.args];
 *   return p;
 * });
 */
export const processHooksRef = createHooksRef('process', () => ({
  preStart: new AsyncSeriesWaterfallHook<[ProcessPreStart]>(['start']),
  onStateChange: new AsyncParallelHook<[ProcessStateEvent]>(['event']),
  onProgress: new AsyncParallelHook<[ProcessProgressEvent]>(['event']),
  onDelete: new AsyncParallelHook<[ProcessDeleteEvent]>(['event']),
}));
