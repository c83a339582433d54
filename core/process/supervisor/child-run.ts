import { spawn, type ChildProcess } from 'node:child_process';
import type { SpawnChild } from './types.ts';

/** Node's own spawn: the supervisor's tests run programs without the core's confinement. */
export const plainSpawn: SpawnChild = (binary, args, opts) => spawn(binary, args, opts);
import { LineSplitter } from '../parse/lines.ts';

export interface RunExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the program could not be spawned at all (e.g. ENOENT). */
  error?: Error;
}

/** How long to wait for stderr to close after the child exited before cutting it off. */
const DRAIN_MS = 1000;

/**
 * One spawn of a program: stdin and stdout are /dev/null (ffmpeg would otherwise read 'q' from
 * stdin), stderr is split into lines. The child leads its own process group so that a stop also
 * reaches whatever it forked, and nothing of it outlives the run.
 */
export class ChildRun {
  readonly pid: number | undefined;
  /** Settles once the child has exited and its stderr is drained; never rejects. */
  readonly exited: Promise<RunExit>;
  readonly #child: ChildProcess;
  #alive: boolean;
  #interrupted = false;
  #killTimer: NodeJS.Timeout | undefined;
  #drainTimer: NodeJS.Timeout | undefined;

  /** Throws synchronously only for arguments Node rejects outright (e.g. a NUL byte). */
  constructor(binary: string, args: readonly string[], env: Record<string, string>, onLine: (line: string) => void, spawnChild: SpawnChild = plainSpawn) {
    const child = spawnChild(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env, detached: true });
    this.#child = child;
    this.pid = child.pid;
    this.#alive = child.pid !== undefined;
    const splitter = new LineSplitter(onLine);
    const stderr = child.stderr!;
    stderr.setEncoding('utf8');
    stderr.on('data', (chunk: string) => splitter.push(chunk));
    stderr.on('error', () => {});
    this.exited = new Promise<RunExit>((resolve) => {
      child.on('error', (error) => {
        // With a pid the error is about signalling, which #signal already tolerates.
        if (child.pid === undefined) resolve({ exitCode: null, signal: null, error });
      });
      child.once('exit', () => {
        this.#alive = false;
        this.#clearKillTimer();
        // Leftovers of the group (a shell's children) would keep stderr open and live on.
        this.#signal('SIGKILL');
        this.#drainTimer = setTimeout(() => stderr.destroy(), DRAIN_MS);
      });
      child.once('close', (exitCode: number | null, signal: NodeJS.Signals | null) => {
        if (this.#drainTimer) clearTimeout(this.#drainTimer);
        this.#drainTimer = undefined;
        splitter.end();
        resolve({ exitCode, signal });
      });
    });
  }

  /** SIGINT now (ffmpeg finishes its outputs), SIGKILL after `graceMs`. Idempotent. */
  interrupt(graceMs: number): void {
    if (!this.#alive || this.#interrupted) return;
    this.#interrupted = true;
    this.#signal('SIGINT');
    this.#killTimer = setTimeout(() => {
      this.#killTimer = undefined;
      this.#signal('SIGKILL');
    }, graceMs);
  }

  /** SIGKILL now. */
  kill(): void {
    this.#clearKillTimer();
    this.#signal('SIGKILL');
  }

  #clearKillTimer(): void {
    if (this.#killTimer) clearTimeout(this.#killTimer);
    this.#killTimer = undefined;
  }

  #signal(sig: NodeJS.Signals): void {
    const pid = this.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, sig);
    } catch {
      // ESRCH: the group is gone already. Fall back to the leader in case it left its group.
      if (this.#alive) {
        try {
          this.#child.kill(sig);
        } catch {
          // exited in between
        }
      }
    }
  }
}
