import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The attack runners' side of the service: the real service as its own OS process (`core/main.ts`
 * with a temporary config), its RSS from /proc, and a legitimate client that keeps asking while an
 * attack runs. Shared by the attack scripts of bench/attacks/.
 */

const MAIN = fileURLToPath(new URL('../../core/main.ts', import.meta.url));
const MB = 1024 * 1024;

export interface Service {
  url: string;
  pid: number;
  dir: string;
  /** VmRSS in MiB. */
  rss(): number;
  /** The process has not exited. */
  alive(): boolean;
  stop(): Promise<void>;
}

/**
 * Starts the service with `config` merged over a bench base (loopback, temp folders, quiet log);
 * `tree` runs it from another checkout (a before/after).
 */
export async function startService(config: Record<string, unknown>, opts: { tree?: string } = {}): Promise<Service> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-attacks-'));
  await mkdir(join(dir, 'disk'));
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    version: 3, address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    log: { level: 'warn' }, update_check: false, ...config,
  }));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const child: ChildProcess = spawn(process.execPath, [opts.tree ? join(opts.tree, 'core/main.ts') : MAIN, '--config', configPath], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-20_000);
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', () => reject(new Error(`the service exited: ${err}`)));
  });
  const pid = child.pid!;
  return {
    url, pid, dir,
    alive: () => child.exitCode === null && child.signalCode === null,
    rss: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One request with a deadline: its status and how long it took (status 0: failed or too slow). */
export function timedRequest(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {}): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers, agent: false, timeout: opts.timeoutMs ?? 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
      res.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, ms: performance.now() - t0 }));
    req.end(opts.body);
  });
}

/** What a legitimate client saw while an attack ran. */
export interface LegitReport {
  probes: number;
  /** Answered 2xx within 1 s. */
  served: number;
  worst_ms: number;
}

/**
 * A legitimate client (127.0.0.1, a fresh connection each time) asking `path` every 250 ms while
 * an attack runs, and RSS sampled every 100 ms.
 */
export class Watch {
  readonly #svc: Service;
  readonly #path: string;
  readonly #headers: Record<string, string>;
  #peak = 0;
  #probes: Array<Promise<{ status: number; ms: number }>> = [];
  #timers: NodeJS.Timeout[] = [];

  constructor(svc: Service, path: string, headers: Record<string, string> = {}) {
    this.#svc = svc;
    this.#path = path;
    this.#headers = headers;
  }

  start(): void {
    this.#peak = this.#svc.rss();
    this.#timers.push(setInterval(() => { this.#peak = Math.max(this.#peak, this.#svc.rss()); }, 100));
    const probe = () => this.#probes.push(timedRequest(this.#svc.url + this.#path, { headers: this.#headers, timeoutMs: 10_000 }));
    probe();
    this.#timers.push(setInterval(probe, 250));
  }

  async stop(): Promise<{ peakMb: number; legit: LegitReport }> {
    for (const t of this.#timers) clearInterval(t);
    this.#peak = Math.max(this.#peak, this.#svc.rss());
    const answers = await Promise.all(this.#probes);
    return {
      peakMb: this.#peak,
      legit: {
        probes: answers.length,
        served: answers.filter((a) => a.status >= 200 && a.status < 300 && a.ms <= 1000).length,
        worst_ms: Math.round(Math.max(0, ...answers.map((a) => a.ms))),
      },
    };
  }
}

/** Waits `ms`, sampling nothing (the service settles: closed sockets, garbage collected). */
export const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const mb = (bytes: number) => bytes / MB;
