import type { Logger } from 'pino';
import type { ChildSpawnOptions, PlaceholderRun, ProcessClock, ProcessOrder, RunCredentials, processHooksRef } from '../../sdk/index.ts';
import type { ExecState, PidFiles, SpawnChild, UsageSampler } from './supervisor/index.ts';
import type { FullConfig } from './config-model.ts';
import type { Resolution } from './command.ts';
import type { RunMonitor } from './run-monitor-types.ts';
import type { StateParts } from './json-write.ts';
import type { DemandEnv } from './demand-runner.ts';
import type { BudgetGate } from './resources/gate.ts';

/* What a process entry (process-entry.ts) gets from the manager, and small helpers of its state. */

type ProcessHooks = ReturnType<typeof processHooksRef.create>;

/** What every entry shares with the manager. */
export interface EntryEnv {
  binary: string;
  /** Starts the child confined (the core's `childrenRef`). */
  spawn?: SpawnChild;
  /** Processes between the spawned pid and ffmpeg (`Confinement.programDepth`). */
  programDepth?: number;
  sampler: UsageSampler;
  /** Pid files of running children (supervisor/orphans.ts). */
  pidFiles?: PidFiles;
  hooks: Readonly<ProcessHooks>;
  log: Logger;
  /** Logical CPUs: limits and usage are percent of the whole machine in the API, of one core below. */
  cpus: number;
  /** Resolves a definition; with `run` for the child about to start (its placeholders carry the run's token). */
  resolve(c: FullConfig, run?: PlaceholderRun): Resolution | string;
  /** Mints each run's credential (the core's `runCredentialsRef`); without it placeholders carry none. */
  runs?: RunCredentials;
  monitor(): RunMonitor;
  now(): number;
  /** The clock of schedules (`scheduler`); default the real one. */
  clock: ProcessClock;
  /** Entries into each state by any process of the engine (`ffmpeg_process`), counted here. */
  stateEntries?: Record<ExecState, number>;
  /** What on-demand processes need of the engine (demand/hub.ts); without it `ondemand` is ignored. */
  demand?: DemandEnv;
  /** The resource budget (`resources.*`) every spawn is admitted by; without it every start goes ahead. */
  budget?: BudgetGate;
  /**
   * Why a run of a process with a maker may not start (what it names its maker may no longer do:
   * `httpHooksRef.processUseBy`), or undefined; without it nothing is asked.
   */
  makerRefusal?(maker: string, id: string, r: Resolution, token: string, since: number): string | undefined;
  /** Whether a process's maker may have it run now (asked without a run, before one is started for it); without it: yes. */
  makerMayRun?(e: { id: string; maker: string | undefined; makerSince: number; resolveFor(run?: PlaceholderRun): Resolution | string }): boolean;
  /** What of the disk folder a process's children reach (its maker's folders: `ChildSpawnOptions.disk`); undefined: all of it. */
  makerDisk?(e: { maker: string | undefined; makerSince: number }): ChildSpawnOptions['disk'];
  /** Whether this node runs process `id` (a cluster's lease; always without one): a deferred resume asks it. */
  owns?(id: string): boolean;
}

/** What a process that is not running would run with, as the `viewCommand` taps rewrite it. */
export function viewedCommand(env: Pick<EntryEnv, 'hooks' | 'log'>, c: FullConfig, command: string[]): string[] {
  const hook = env.hooks.viewCommand;
  if (!hook.taps.length) return command;
  try {
    const out = hook.call({ id: c.id, reference: c.reference, inputs: c.input, args: [...command] });
    return Array.isArray(out?.args) ? out.args.map(String) : command;
  } catch (err) {
    env.log.warn({ err, process: c.id }, 'viewCommand tap failed');
    return command;
  }
}

export interface EntryTimes {
  createdAt: number;
  updatedAt: number;
  order: ProcessOrder;
  /** The subject of its last create or update through an access plugin: what it may do is asked again at each start. */
  maker?: string;
  /** When the maker asked for it (unix seconds; default `updatedAt`): the user that had the maker's name then is asked. */
  makerSince?: number;
}

/** A zero count for every exec state. */
export function stateCounts(): Record<ExecState, number> {
  return { finished: 0, starting: 0, running: 0, finishing: 0, failed: 0, killed: 0 };
}

/** Whether two state views are built from the same parts (the cached JSON still holds). */
export function sameState(a: StateParts, b: StateParts): boolean {
  return a.order === b.order && a.exec === b.exec && a.runtimeSeconds === b.runtimeSeconds
    && a.reconnectSeconds === b.reconnectSeconds && a.lastLogline === b.lastLogline && a.progress === b.progress
    && a.memoryBytes === b.memoryBytes && a.cpuUsage === b.cpuUsage && a.command === b.command && a.nextRun === b.nextRun && a.ondemand === b.ondemand;
}

/** A process as the resource budget sees it (resources/gate.ts): its own limits are what it asks for. */
export function budgetSubject(e: { id: string; reference: string; config: FullConfig; monitor: RunMonitor }) {
  const l = e.config.limits;
  return { id: e.id, reference: e.reference, request: { cpu: l.cpu_usage, memoryBytes: l.memory_mbytes * 1024 * 1024 }, note: (line: string) => e.monitor.note(line) };
}
