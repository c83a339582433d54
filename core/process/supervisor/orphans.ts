import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { pidAlive } from '../../../sdk/index.ts';

/*
 * The service owns its children across crashes. Node cannot ask the kernel to kill a child when
 * its parent dies (no prctl(PR_SET_PDEATHSIG)), so a SIGKILLed or OOM-killed service leaves every
 * ffmpeg running. Each running child therefore has a pid file; on the next start, before anything
 * is restored, the children that outlived us are found and stopped, so there is never a second copy.
 */

/** What a pid file holds. `startTime` (field 22 of /proc/<pid>/stat) tells a reused pid apart. */
export interface PidRecord {
  pid: number;
  startTime: string;
  binary: string;
  args: string[];
}

/** The supervisor's side: one pid file per process id while its child runs. */
export interface PidFiles {
  record(id: string, pid: number, binary: string, args: readonly string[]): void;
  forget(id: string, pid: number): void;
}

/** Field 22 (starttime) of a /proc/<pid>/stat text; counting starts after the last ')' (comm may hold anything). */
export function startTimeOf(stat: string): string | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  // after ')' comes field 3 (state); starttime is field 22
  return stat.slice(close + 2).split(' ')[19];
}

/** Pure: whether the live process `stat`/`cmdline` is the one `rec` describes (not a reused pid). */
export function isSameProcess(rec: PidRecord, stat: string | undefined, cmdline: string | undefined): boolean {
  if (stat === undefined) return false;
  if (startTimeOf(stat) !== rec.startTime) return false;
  // The start time alone is unique per pid; the command line guards against a corrupt record.
  if (cmdline === undefined) return true;
  const argv = cmdline.split('\0').filter((a, i, all) => i < all.length - 1 || a !== '');
  return argv.length === rec.args.length + 1 && argv.slice(1).every((a, i) => a === rec.args[i]);
}

/** Parses a pid file; undefined when it is not one of ours. */
export function parseRecord(text: string): PidRecord | undefined {
  try {
    const r = JSON.parse(text) as Partial<PidRecord>;
    if (!Number.isSafeInteger(r.pid) || (r.pid as number) <= 1 || typeof r.startTime !== 'string' || !Array.isArray(r.args)) return undefined;
    return { pid: r.pid as number, startTime: r.startTime, binary: String(r.binary ?? ''), args: r.args.map(String) };
  } catch {
    return undefined;
  }
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** A file name that is safe for any process id (ids may hold '/', '..', anything). */
function safeName(id: string): string {
  return `${createHash('sha256').update(id).digest('hex').slice(0, 40)}.pid`;
}

/** Pid files under `dir` (created on first use), written atomically (temp file, rename). */
export class PidDir implements PidFiles {
  readonly #dir: string;
  readonly #log: Logger | undefined;

  constructor(dir: string, log?: Logger) {
    this.#dir = dir;
    this.#log = log;
  }

  record(id: string, pid: number, binary: string, args: readonly string[]): void {
    const rec: PidRecord = { pid, startTime: startTimeOf(readProc(pid, 'stat') ?? '') ?? '', binary, args: [...args] };
    const file = join(this.#dir, safeName(id));
    try {
      mkdirSync(this.#dir, { recursive: true });
      writeFileSync(`${file}.tmp`, JSON.stringify(rec));
      renameSync(`${file}.tmp`, file);
    } catch (err) {
      this.#log?.warn({ err, process: id }, 'cannot write pid file');
    }
  }

  forget(id: string, pid: number): void {
    const file = join(this.#dir, safeName(id));
    // A newer run of the same id may have written it already; only remove our own record.
    if (parseRecord(readProc0(file))?.pid === pid) rmSync(file, { force: true });
  }
}

function readProc0(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

async function stopGroup(pid: number, graceMs: number): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    // The child leads its own group (child-run.ts): reach what it forked too.
    try { process.kill(-pid, sig); } catch { try { process.kill(pid, sig); } catch { /* gone */ } }
  };
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pidAlive(pid) && Date.now() < deadline) await sleep(50);
  if (pidAlive(pid)) signal('SIGKILL');
  // a SIGKILLed process still needs the kernel to reap it; its parent (init) does that quickly
  while (pidAlive(pid) && readProc(pid, 'stat')?.split(') ')[1]?.[0] !== 'Z') await sleep(20);
}

/**
 * Stops every child recorded under `dir` that still runs (same pid AND same start time), then
 * removes all pid files. Call once at start, before any process is started. Returns the pids stopped.
 */
export async function reapOrphans(dir: string, log?: Logger, graceMs = 3000): Promise<number[]> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.pid') || n.endsWith('.tmp'));
  } catch {
    return [];
  }
  const stopped: number[] = [];
  await Promise.all(names.map(async (name) => {
    const file = join(dir, name);
    const rec = name.endsWith('.pid') ? parseRecord(readProc0(file)) : undefined;
    if (rec && isSameProcess(rec, readProc(rec.pid, 'stat'), readProc(rec.pid, 'cmdline'))) {
      log?.warn({ pid: rec.pid, binary: rec.binary }, 'stopping a child that outlived the previous run of the service');
      await stopGroup(rec.pid, graceMs);
      stopped.push(rec.pid);
    }
    rmSync(file, { force: true });
  }));
  return stopped;
}
