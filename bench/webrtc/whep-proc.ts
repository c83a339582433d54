import { readFileSync, readdirSync } from 'node:fs';
import { cpuSeconds, rssMb, sleep } from './ipc.ts';

/**
 * /proc readings of the WHEP bench (`whep.ts`): the processes under measure found by their command
 * line among the service's descendants, CPU (utime + stime of all threads, children excluded) over
 * a window, RSS sampled each second.
 */

/** The command line of a process, arguments joined by spaces ('' when it is gone). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

/** Every descendant of `pid` (children of all its threads, recursively). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try { tasks = readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const task of tasks) {
    let kids: string[] = [];
    try { kids = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean); } catch { continue; }
    for (const kid of kids.map(Number)) out.push(kid, ...descendants(kid));
  }
  return out;
}

/** The service's WebRTC host process and its feed ffmpeg (the one that reads MPEG-TS from its stdin and writes RTP), if running. */
export function servicePids(service: number): { host?: number; feed?: number } {
  const kids = descendants(service).map((pid) => ({ pid, cmd: cmdline(pid) }));
  const host = kids.find((k) => k.cmd.includes('webrtc/host/entry'))?.pid;
  const feed = kids.find((k) => /(^|\/)ffmpeg /.test(k.cmd) && k.cmd.includes('-i pipe:0') && k.cmd.includes('-f rtp'))?.pid;
  return { ...(host ? { host } : {}), ...(feed ? { feed } : {}) };
}

/** CPU seconds, or NaN when the process is gone. */
function cpuOr(pid: number): number {
  try { return cpuSeconds(pid); } catch { return NaN; }
}

function rssOr(pid: number): number {
  try { return rssMb(pid); } catch { return NaN; }
}

export interface ProcFigures { pid: number; cpuPercent: number; rssMeanMb: number; rssMaxMb: number }

/**
 * Measures named processes over `seconds`: CPU % of one core from the two ends, RSS each second.
 * A process gone before the end reads NaN.
 */
export async function measure(pids: Record<string, number>, seconds: number): Promise<{ wall: number; figures: Record<string, ProcFigures> }> {
  const names = Object.keys(pids);
  const c0 = Object.fromEntries(names.map((n) => [n, cpuOr(pids[n]!)]));
  const rss: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  const t0 = performance.now();
  for (let s = 1; s <= seconds; s++) {
    await sleep(Math.max(0, t0 + s * 1000 - performance.now()));
    for (const n of names) rss[n]!.push(rssOr(pids[n]!));
  }
  const wall = (performance.now() - t0) / 1000;
  const figures: Record<string, ProcFigures> = {};
  for (const n of names) {
    const r = rss[n]!;
    figures[n] = {
      pid: pids[n]!, cpuPercent: ((cpuOr(pids[n]!) - c0[n]!) / wall) * 100,
      rssMeanMb: r.reduce((a, b) => a + b, 0) / r.length, rssMaxMb: Math.max(...r),
    };
  }
  return { wall, figures };
}

/** A process's start time (clock ticks since boot): with its pid, it names one process ('' when gone). */
export function startTime(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
  } catch {
    return '';
  }
}

/**
 * Sends SIGKILL to each process still alive that is the one seen (pid and start time: a pid the
 * system gave to another process meanwhile is left alone); those killed.
 */
export function killAll(seen: ReadonlyMap<number, string>): string[] {
  const killed: string[] = [];
  for (const [pid, start] of seen) {
    if (!start || startTime(pid) !== start) continue;
    const cmd = cmdline(pid);
    try { process.kill(pid, 'SIGKILL'); killed.push(`${pid} ${cmd.slice(0, 120)}`); } catch { /* gone */ }
  }
  return killed;
}
