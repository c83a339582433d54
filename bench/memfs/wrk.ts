import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/**
 * What the wrk benchmarks (threads-wrk.ts, threads-sessions.ts) share: one `wrk` run parsed,
 * questions to a forked server child (servers.ts's answerParent), medians, the check for wrk.
 */

export interface WrkRun { rps: number; p99: number; errors: number; non2xx: number }

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Exits with a message when `wrk` is not installed (the benchmark never installs it). */
export function needWrk(script: string): void {
  if (!spawnSync('wrk', ['--version']).error) return;
  console.error(`${script} needs wrk, which is not installed (Debian/Ubuntu: apt-get install wrk). Nothing measured.`);
  process.exit(2);
}

/** Sends `message` to a server child and resolves with its answer. */
export function ask(child: ChildProcess, message: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`server exited (${code})`));
    child.once('message', (m) => { child.off('exit', exited); resolve(m); });
    child.once('exit', exited);
    child.send(message);
  });
}

/** One wrk run (one client thread); its text report parsed: Requests/sec, the 99 % latency, socket errors, non-2xx. */
export function wrk(url: string, seconds: number, connections: number): Promise<WrkRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.on('error', reject);
    child.on('exit', () => {
      const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
      const m = /\s99%\s+([\d.]+)(us|ms|s)/.exec(out);
      const p99 = m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
      const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).reduce((s, x) => s + Number(x), 0) ?? 0;
      if (Number.isNaN(rps)) reject(new Error(`wrk output not understood:\n${out}`));
      else resolve({ rps, p99, errors, non2xx });
    });
  });
}
