import { spawn, spawnSync } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A checkout's service started as `npm start` starts it (scripts/start.sh): its sources built to
 * JavaScript by its `scripts/build.mjs`, then `<runtime> app/main.js --config <file>` with the
 * runtime `scripts/node.sh` picks, the `CORE_*` and `MALLOC_ARENA_MAX` variables removed so the
 * service relaunches itself with its own flags (core/runtime/relaunch.ts). One flag is added:
 * `--inspect-port=127.0.0.1:0`, which opens nothing by itself; `inspect()` then turns the inspector
 * on with SIGUSR1 (after the figures that must not include it were read) to measure the heap.
 * `BENCH_NODE_ARGS` adds flags to the runtime (e.g. `--cpu-prof --cpu-prof-dir=DIR`; the relaunch keeps them);
 * `BENCH_STDOUT=<file>` keeps the service's stdout there (e.g. with `--trace-gc`).
 */

export interface Memory {
  /** VmRSS and RssAnon from /proc, MB. */
  rss: number;
  anon: number;
}

export interface Inspected {
  /** process.memoryUsage() (MB) before any collection, after a full one, after memory-reducing ones. */
  before: Record<string, number>;
  afterGc: Record<string, number>;
  afterReducing: Record<string, number>;
  /** Whether malloc_trim(0) (the service's own module) gave pages back, and RSS after it. */
  trimmed: boolean | null;
  afterTrim: Memory;
}

export interface Deployed {
  pid: number;
  url: string;
  memory(): Memory;
  /** Heap figures through the inspector (turned on here; it stays on until `stop`). */
  inspect(): Promise<Inspected>;
  /** A CPU profile of the main thread over `ms`, written to `file` (`.cpuprofile`; the inspector stays on). */
  profile(ms: number, file: string): Promise<void>;
  stop(): Promise<void>;
}

const MB = 1024 * 1024;

/** Builds the checkout as its install step does; the entry `npm start` runs. */
export function buildCheckout(root: string): string {
  const build = join(root, 'scripts/build.mjs');
  if (!existsSync(build)) throw new Error(`${root} has no scripts/build.mjs`);
  if (spawnSync(process.execPath, [build], { stdio: 'inherit' }).status !== 0) throw new Error(`build failed in ${root}`);
  // the entry moved to the composition package (issue 45.3); an older tree still has core/main.js
  return existsSync(join(root, 'app/main.ts')) ? join(root, 'app/main.js') : join(root, 'core/main.js');
}

/** The runtime the checkout's `scripts/node.sh` picks (this one when it has none). */
function runtimeOf(root: string): string {
  const r = spawnSync('bash', [join(root, 'scripts/node.sh')], { encoding: 'utf8' });
  const path = r.status === 0 ? r.stdout.trim() : '';
  return path && existsSync(path) ? path : process.execPath;
}

function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, anon: kb('RssAnon') / 1024 };
}

/** Starts the service of `root` with `config` (merged over temp folders under `dir`); resolves once it listens. */
/** `nodeArgs`: runtime flags for this start only, after `BENCH_NODE_ARGS` (a flag set compared against the deployed one). */
export async function startDeployed(root: string, main: string, dir: string, config: Record<string, unknown> = {}, nodeArgs: readonly string[] = []): Promise<Deployed> {
  await mkdir(join(dir, 'disk'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    ...config,
  }));
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('CORE_') || k === 'MALLOC_ARENA_MAX' || k === 'NODE_OPTIONS') delete env[k];
  const extra = [...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), ...nodeArgs];
  // BENCH_STDOUT=<file>: the service's stdout goes there (e.g. with BENCH_NODE_ARGS=--trace-gc)
  const out = process.env.BENCH_STDOUT ? openSync(process.env.BENCH_STDOUT, 'a') : 'ignore';
  const child = spawn(runtimeOf(root), ['--inspect-port=127.0.0.1:0', ...extra, main, '--config', configPath], { env, stdio: ['ignore', out, 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
    if (err.length > 1e6) err = err.slice(-1e5);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner in 60 s: ${err.slice(-2000)}`)), 60_000);
    const look = () => {
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        child.stderr!.off('data', look);
        resolve(m[1]!);
      }
    };
    child.stderr!.on('data', look);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`exited ${code}: ${err.slice(-2000)}`)); });
  });
  const pid = child.pid!;
  return {
    pid, url,
    memory: () => memoryOf(pid),
    inspect: () => inspect(pid, root, () => err),
    profile: (ms, file) => profile(pid, () => err, ms, file),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * Evaluated in the service's main context, step by step: a full collection (what V8 would do on
 * its own), then memory-reducing ones (what the service's quiet collector runs: they also give
 * back the pages V8 keeps pooled), then malloc_trim(0). Each waits 200 ms for V8's background
 * sweeping and freeing before the figures are read.
 */
function probe(trimModule: string): string {
  return `(async () => {
    const v8 = process.getBuiltinModule('v8'), vm = process.getBuiltinModule('vm');
    const settle = () => new Promise((r) => setTimeout(r, 200));
    const mb = (m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v / ${MB}]));
    const before = mb(process.memoryUsage());
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc');
    v8.setFlagsFromString('--no-expose-gc');
    gc({ type: 'major', execution: 'sync' });
    await settle();
    const afterGc = mb(process.memoryUsage());
    for (let i = 0; i < 2; i++) gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    await settle();
    const afterReducing = mb(process.memoryUsage());
    let trimmed = null;
    try { const mod = { exports: {} }; process.dlopen(mod, ${JSON.stringify(trimModule)}); trimmed = mod.exports.trim(); } catch {}
    await settle();
    return JSON.stringify({ before, afterGc, afterReducing, trimmed });
  })()`;
}

/** Opens the service's inspector (SIGUSR1 the first time) and runs `use` on its socket. */
async function withInspector<T>(pid: number, stderr: () => string, use: (call: (method: string, params?: unknown) => Promise<unknown>) => Promise<T>): Promise<T> {
  const seen = /Debugger listening on (ws:\/\/\S+)/g;
  let ws = [...stderr().matchAll(seen)].at(-1)?.[1];
  if (!ws) process.kill(pid, 'SIGUSR1');
  const deadline = Date.now() + 10_000;
  while (!ws && Date.now() < deadline) {
    ws = /Debugger listening on (ws:\/\/\S+)/.exec(stderr())?.[1];
    if (!ws) await new Promise((r) => setTimeout(r, 50));
  }
  if (!ws) throw new Error('the inspector did not open');
  const socket = new WebSocket(ws);
  await new Promise((resolve, reject) => { socket.onopen = resolve; socket.onerror = reject; });
  let next = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  socket.onmessage = (m) => {
    const d = JSON.parse(String(m.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const w = d.id === undefined ? undefined : waiting.get(d.id);
    if (!w) return;
    waiting.delete(d.id!);
    if (d.error) w.reject(new Error(d.error.message));
    else w.resolve(d.result);
  };
  const call = (method: string, params?: unknown) => new Promise<unknown>((resolve, reject) => {
    const id = next++;
    waiting.set(id, { resolve, reject });
    socket.send(JSON.stringify({ id, method, params }));
  });
  try {
    return await use(call);
  } finally {
    socket.close();
  }
}

async function inspect(pid: number, root: string, stderr: () => string): Promise<Inspected> {
  return withInspector(pid, stderr, async (call) => {
    const trim = join(root, 'core/runtime/trim/build/malloc-trim.node');
    const res = await call('Runtime.evaluate', { expression: probe(trim), returnByValue: true, awaitPromise: true }) as { result?: { value?: unknown } };
    const value = res.result?.value;
    if (typeof value !== 'string') throw new Error(`evaluation failed: ${JSON.stringify(res).slice(0, 500)}`);
    const r = JSON.parse(value) as Omit<Inspected, 'afterTrim'>;
    return { ...r, afterTrim: memoryOf(pid) };
  });
}

/** A CPU profile of the main thread over `ms` (V8's sampling profiler through the inspector), written to `file`. */
async function profile(pid: number, stderr: () => string, ms: number, file: string): Promise<void> {
  await withInspector(pid, stderr, async (call) => {
    // BENCH_HEAP_PROFILE=1: a sampling heap profile of everything allocated (collected or not) instead
    if (process.env.BENCH_HEAP_PROFILE) {
      await call('HeapProfiler.enable');
      await call('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
      await new Promise((r) => setTimeout(r, ms));
      const { profile: p } = await call('HeapProfiler.stopSampling') as { profile: unknown };
      await call('HeapProfiler.disable');
      await writeFile(file.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(p));
      return;
    }
    await call('Profiler.enable');
    // BENCH_PROF_INTERVAL_US: a finer sampling (an idle service's few busy milliseconds)
    await call('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROF_INTERVAL_US ?? 1000) });
    await call('Profiler.start');
    await new Promise((r) => setTimeout(r, ms));
    const { profile: p } = await call('Profiler.stop') as { profile: unknown };
    await call('Profiler.disable');
    await writeFile(file, JSON.stringify(p));
  });
}
