import type { ChildProcess, StdioOptions } from 'node:child_process';
import { createServiceRef } from './refs.ts';

/** How the children of this service are confined. */
export interface Confinement {
  /** `landlock`: by the kernel, through the service's exec wrapper; `none`: not at all. */
  readonly mechanism: 'landlock' | 'none';
  /** One line for the start-up banner and the log: what holds, or why nothing does. */
  readonly detail: string;
  /**
   * Processes between a spawned child's pid and the program it runs: 0 (or absent) when the pid is
   * the program's; 2 where children get namespaces (the confinement's wrapper, then the pid
   * namespace's init, then the program). Signals and exit status pass through unchanged; whoever
   * samples the program's CPU or memory steps down that many first children.
   */
  readonly programDepth?: number;
}

/** What a plugin may choose about a child; where it writes and what it reads is the core's decision. */
export interface ChildSpawnOptions {
  /** As node's `spawn`; default `['ignore', 'ignore', 'pipe']`. */
  stdio?: StdioOptions;
  /** The child's whole environment (nothing of the service's is passed on); default empty. */
  env?: Record<string, string>;
  /** Leads its own process group (a stop reaches everything it forked). */
  detached?: boolean;
  /** Ends the child with `killSignal` (default SIGKILL) when aborted. */
  signal?: AbortSignal;
  killSignal?: NodeJS.Signals;
  /**
   * Its threads and processes at once (all it starts counted); default `encoder.confinement.max_tasks`,
   * 0 none: for a host of the service's own whose threads follow its connections (the SRT host makes
   * one per publisher), bounded by its plugin's own connection limit instead.
   */
  maxTasks?: number;
  /**
   * Narrows what it reaches of the disk filesystem's root (`storage.disk.dir`) to these paths beneath
   * it (absolute; a folder to write is made when missing): `read` read, `write` read and written;
   * nothing else of the root (the kernel refuses; all of it stays noexec). The root itself in a list
   * grants all of it. Default: all of it, read and written. The process engine gives a process with a
   * maker what its maker's `fs` policies name there (`httpHooksRef.makerFolders`).
   */
  disk?: { read: readonly string[]; write: readonly string[] };
}

/**
 * Starts programs (ffmpeg and any other) the only way the service does: confined by the operating
 * system. A child writes only beneath the disk filesystem's root, the folders of
 * `encoder.confinement.writable` and a private temporary folder (`TMPDIR`, removed when it ends);
 * it cannot read the service's secrets (config file, `db.dir`, TLS files) and dies with the service.
 * Where the kernel offers no confinement the child runs as before, unless the operator set
 * `encoder.confinement.require`: then `spawn` throws.
 *
 * @example
 * deps: { children: childrenRef },
 * setup(ctx) {
 *   const child = ctx.deps.children.spawn('ffmpeg', ['-i', url, '-f', 'null', '-'], { stdio: ['ignore', 'ignore', 'pipe'] });
 *   ctx.onClose(() => { child.kill('SIGKILL'); });
 * }
 */
export interface ChildrenService {
  readonly confinement: Confinement;
  /** As node's `spawn`: errors of the spawn itself arrive as the child's `error` event. */
  spawn(file: string, args: readonly string[], options?: ChildSpawnOptions): ChildProcess;
}

/**
 * Where the core provides the children service (one provider).
 *
 * @example
 * deps: { children: childrenRef }
 */
export const childrenRef = createServiceRef<ChildrenService>('core.children');

/**
 * Ends a child spoken to over IPC (a host process): closes its channel, which it takes as the
 * order to end its work and exit, and kills it when it has not exited after `graceMs`. Resolves
 * once it is gone (at once when it already is).
 *
 * @example
 * ctx.onClose(() => endIpcChild(host, 3000));
 */
export async function endIpcChild(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(kill);
}
