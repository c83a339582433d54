import type { ChildProcess } from 'node:child_process';
import type { ChildSpawnOptions } from '../../../sdk/index.ts';
import type { Logger } from 'pino';
import type { ExecState } from './exit-state.ts';
import type { SupervisorLimits } from './limit-watch.ts';
import type { UsageListener } from './usage-sampler.ts';
import type { PidFiles } from './orphans.ts';

/**
 * What a supervisor needs of a sampler: `UsageSampler` in production; tests inject their own
 * samples to check the limit mechanism without depending on the machine's load.
 */
export interface Sampler {
  watch(pid: number, listener: UsageListener, depth?: number): () => void;
  close(): void;
}

/** Why the supervisor itself moved a process (the sdk's `ProcessStateCause`). */
export type StateCause = 'reconnect' | 'stale' | 'limit' | 'prepare' | 'spawn' | 'schedule' | 'duration' | 'demand' | 'idle' | 'budget' | 'maker';

export interface RunEndInfo {
  exitCode: number | null;
  signal: string | null;
  /** Set when the supervisor ended the run or it never started (stale, limit, veto, spawn error). */
  reason?: string;
}

/** Starts one child: the core's confined spawn (`childrenRef`) in the service, node's own in unit tests. */
export type SpawnChild = (binary: string, args: readonly string[],
  opts: { stdio: ['ignore', 'ignore', 'pipe']; env: Record<string, string>; detached: true; disk?: ChildSpawnOptions['disk'] }) => ChildProcess;

export interface SupervisorOptions {
  /** For logs. */
  id: string;
  /** e.g. 'ffmpeg' or an absolute path; looked up in the child's PATH (/usr/bin:/bin when unset). */
  binary: string;
  /**
   * Called before every spawn (start, reconnect, restart). Returns the argv (without the binary),
   * or throws an Error whose message explains why it must not start (e.g. a preStart veto): the
   * supervisor then goes to 'failed' with that message as `lastReason` and does NOT reconnect.
   */
  prepare(): Promise<string[]>;
  /**
   * Before every prepare and spawn (the resource budget): undefined to go ahead, or why not (the
   * run then ends `failed`, cause `budget`, and reconnect rules apply), or a promise of either
   * while the start waits (state `starting`; the command that started it has answered). `cause`
   * says what started it (none: a start or restart asked for). A stop aborts `signal`: the run ends `finished`.
   */
  admit?(cause: StateCause | undefined, signal: AbortSignal): string | undefined | Promise<string | undefined>;
  reconnect: boolean;
  /** 0 = at once, but never more than one spawn per `minRespawnIntervalMs`. */
  reconnectDelaySeconds: number;
  /** 0 = off; no `touch()` for this long -> stopped (SIGINT, SIGKILL after the grace), ends `killed`. */
  staleTimeoutSeconds: number;
  limits: SupervisorLimits;
  /** Every stderr line (split on \r and \n, empty lines skipped), in order. */
  onLine(line: string): void;
  /** A new run begins (state `starting`, before prepare and spawn). Always paired with onRunEnd. */
  onRunStart?(): void;
  /** A run ended (after exit and stderr drained, or after a veto / spawn error), with the final state. */
  onRunEnd?(state: ExecState, info: RunEndInfo): void;
  /** `cause` says who moved it when the supervisor did (reconnect, stale, limit, prepare, spawn). */
  onStateChange?(from: ExecState, to: ExecState, reason?: string, cause?: StateCause): void;
  log?: Logger;
  /** Clock for tests; default Date.now. */
  now?(): number;
  /** Shared sampler (one timer per app, created by the manager); default: a private one. */
  sampler?: Sampler;
  /** Records each running child (pid file) so that a later start can stop it if we crashed. */
  pidFiles?: PidFiles;
  /** Time between SIGINT and SIGKILL on a stop; default 5000 ms (reference 7.3). */
  stopGraceMs?: number;
  /** Least time between two spawn attempts caused by reconnect, so a delay of 0 cannot spin; default 1000 ms. */
  minRespawnIntervalMs?: number;
  /** Environment of the child; default empty, as the reference spawns ffmpeg (7.3). */
  env?: Record<string, string>;
  /** How the child is started; default node's spawn (the engine passes the core's confined one). */
  spawn?: SpawnChild;
  /** Processes between the spawned pid and the program (`Confinement.programDepth`); default 0. */
  programDepth?: number;
}

export interface SupervisorStatus {
  state: ExecState;
  pid: number | undefined;
  /** Seconds (fractional) since the current run was spawned; 0 when no child is running. */
  runtimeSeconds: number;
  /** Seconds (fractional, >= 0) until the next reconnect attempt, -1 when none is scheduled. */
  reconnectSeconds: number;
  /** Last measured usage of the running child: percent of one core, bytes RSS; 0 when not running. */
  cpuUsage: number;
  memoryBytes: number;
  /** Why the last run ended if the supervisor ended it (stale, limit, veto, spawn error). */
  lastReason?: string;
}
