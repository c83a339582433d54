import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { storedProcess } from '../process/server.ts';

/**
 * API memory and start-up (issue 29): the real service (app/main.js as built, or app/main.ts of a tree without a build step; a temp config with the default
 * plugins, http.threads 0) in a child process.
 *  - memory: 50 stored processes, metrics history and Prometheus on; RSS idle, then after 2,000
 *    and 6,000 API requests, a mix of
 *    GET /api/v3/config, /api/v3/process, /metrics and /api/v3/metrics (4 keep-alive clients);
 *    each RSS read 2 s after the load stopped, and again 8 s after (once the service was quiet).
 *  - start-up: the default config (metrics off), 1,000 stored processes (order stop, autostart false:
 *    no ffmpeg runs); time and the service's CPU from the
 *    spawn to the first 200 of GET /api, median of 5 starts.
 * Run: `node bench/api/memory-startup.ts [label, e.g. before] [starts, default 5] [memory|startup]`.
 * Writes bench/results/api-memory-startup-<date>[-label].md. BENCH_NODE_ARGS adds flags to the
 * service's node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */

const LABEL = process.argv[2] ?? '';
const STARTS = Number(process.argv[3] ?? 5);
/** `memory` or `startup` runs that part alone (while profiling); the results file is written either way. */
const ONLY = process.argv[4] ?? '';
/** The built JavaScript as `npm start` runs it (issue 29), or the sources of a checkout that has no build step (a "before" tree). */
const MAIN = (() => {
  const build = fileURLToPath(new URL('../../scripts/build.mjs', import.meta.url));
  if (!existsSync(build)) return fileURLToPath(new URL('../../app/main.ts', import.meta.url));
  if (spawnSync(process.execPath, [build], { stdio: 'inherit' }).status !== 0) throw new Error('build failed');
  return fileURLToPath(new URL('../../app/main.js', import.meta.url));
})();
const MIX = ['/api/v3/config', '/api/v3/process', '/metrics', '/api/v3/metrics'];
const mb = (bytes: number) => (bytes / 1048576).toFixed(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** A temp directory with config.json and a db.json holding `count` stopped processes. */
async function prepare(count: number, port: number, metrics: boolean): Promise<{ dir: string; configPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-api-mem-'));
  await mkdir(join(dir, 'disk'), { recursive: true });
  await mkdir(join(dir, 'db'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: `127.0.0.1:${port}`, update_check: false, http: { threads: 0 },
    db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    ...(metrics ? { metrics: { enable: true, enable_prometheus: true } } : {}),
  }));
  const stored: Record<string, unknown> = {};
  const meta: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const p = storedProcess(i);
    stored[p.id] = p;
    meta[p.id] = i % 2 ? { 'restreamer-ui': { name: `channel ${i}`, meta: { title: 'x'.repeat(200) } } } : null;
  }
  await writeFile(join(dir, 'db', 'db.json'), JSON.stringify({ version: 4, process: stored, metadata: { system: {}, process: meta } }));
  return { dir, configPath };
}

function spawnService(configPath: string): ChildProcess {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...extra, MAIN, '--config', configPath], {
    env: { ...env, CORE_LOG_STDOUT: 'false' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  child.stderr!.resume();
  return child;
}

function get(agent: Agent | false, port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end();
  });
}

/** Polls GET /api every 2 ms until it answers 200; the time since `t0` in ms. */
async function firstAnswer(port: number, t0: number, child: ChildProcess): Promise<number> {
  const deadline = t0 + 60_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode})`);
    const status = await get(false, port, '/api').catch(() => 0);
    if (status === 200) return performance.now() - t0;
    await sleep(2);
  }
  throw new Error('the service did not answer within 60 s');
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** CPU seconds (user + system, all threads) the process has used so far, from /proc. */
function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

/** `n` requests of the mix from 4 keep-alive clients; throws on a status other than 200. */
async function load(port: number, n: number, agent: Agent): Promise<void> {
  let next = 0;
  const client = async () => {
    for (let i = next++; i < n; i = next++) {
      const path = MIX[i % MIX.length]!;
      const status = await get(agent, port, path);
      if (status !== 200) throw new Error(`GET ${path}: ${status}`);
    }
  };
  await Promise.all([client(), client(), client(), client()]);
}

interface MemoryResult { idle: number; after2k: number; after6k: number; rounds: number[]; quiet2k: number; quiet6k: number; quietRounds: number[] }

async function memory(): Promise<MemoryResult> {
  const port = await freePort();
  const { dir, configPath } = await prepare(50, port, true);
  const child = spawnService(configPath);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    await firstAnswer(port, performance.now(), child);
    await sleep(5000);
    const idle = rssOf(child.pid!);
    const rounds: number[] = [];
    const quietRounds: number[] = [];
    for (let i = 0; i < 6; i++) {
      await load(port, 1000, agent);
      await sleep(2000);
      rounds.push(rssOf(child.pid!));
      // and once the service has been quiet a while (what comes back: core/runtime/quiet-gc.ts)
      await sleep(6000);
      quietRounds.push(rssOf(child.pid!));
    }
    return { idle, after2k: rounds[1]!, after6k: rounds[5]!, rounds, quiet2k: quietRounds[1]!, quiet6k: quietRounds[5]!, quietRounds };
  } finally {
    agent.destroy();
    await stop(child);
    await rm(dir, { recursive: true, force: true });
  }
}

interface Start { ms: number; cpu: number }

async function startups(): Promise<Start[]> {
  const port = await freePort();
  const { dir, configPath } = await prepare(1000, port, false);
  const times: Start[] = [];
  try {
    for (let i = 0; i < STARTS; i++) {
      const t0 = performance.now();
      const child = spawnService(configPath);
      try {
        const ms = await firstAnswer(port, t0, child);
        times.push({ ms, cpu: cpuOf(child.pid!) });
      } finally {
        await stop(child);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function report(mem: MemoryResult, starts: Start[], load0: number[]): string {
  const times = starts.map((s) => s.ms);
  const cpu = starts.map((s) => s.cpu);
  const grow = (x: number) => `${mb(x)} (+${mb(x - mem.idle)})`;
  return [
    `# API memory and start-up${LABEL ? ` (${LABEL})` : ''}, ${new Date().toISOString()}`, '',
    `${cpus().length} CPUs; load average at the start ${load0.map((x) => x.toFixed(2)).join(' ')}, at the end ${loadavg().map((x) => x.toFixed(2)).join(' ')}.`,
    `The real service (${MAIN.slice(MAIN.indexOf('core/'))}, default plugins, http.threads 0) in a child process; the memory rows with`,
    'the metrics history and Prometheus on and 50 stored processes, the start-up rows with the default config.',
    `Node flags of the service: ${process.env.BENCH_NODE_ARGS || 'none'}.`, '',
    '| figure | value |', '|---|---|',
    `| idle RSS, 50 stored processes (MB) | ${mb(mem.idle)} |`,
    `| RSS after 2,000 mixed API requests (MB, growth) | ${grow(mem.after2k)} |`,
    `| RSS after 6,000 mixed API requests (MB, growth) | ${grow(mem.after6k)} |`,
    `| RSS after each 1,000 (MB) | ${mem.rounds.map(mb).join(', ')} |`,
    `| the same 8 s after each 1,000, once quiet (MB): after 2,000 / 6,000 (growth) | ${grow(mem.quiet2k)} / ${grow(mem.quiet6k)} |`,
    `| 8 s after each 1,000 (MB) | ${mem.quietRounds.map(mb).join(', ')} |`,
    `| start-up to the first 200 of GET /api, 1,000 stored processes (s, median of ${times.length}) | ${(median(times) / 1000).toFixed(3)} |`,
    `| each start (s) | ${times.map((t) => (t / 1000).toFixed(3)).join(', ')} |`,
    `| CPU used by the service until that answer (s, median; all threads) | ${median(cpu).toFixed(2)} |`,
    `| each start's CPU (s) | ${cpu.map((c) => c.toFixed(2)).join(', ')} |`, '',
    'The CPU column is what the load on a shared box cannot inflate (the wall time can: read the load average).', '',
    `Mix: ${MIX.map((p) => `GET ${p}`).join(', ')} in turn, 4 keep-alive clients; RSS read from /proc 2 s after each 1,000.`, '',
  ].join('\n');
}

async function main(): Promise<void> {
  const load0 = loadavg();
  const mem = ONLY === 'startup' ? { idle: NaN, after2k: NaN, after6k: NaN, rounds: [], quiet2k: NaN, quiet6k: NaN, quietRounds: [] } : await memory();
  const times = ONLY === 'memory' ? [] : await startups();
  const md = report(mem, times, load0);
  const name = `api-memory-startup-${new Date().toISOString().slice(0, 10)}${LABEL ? `-${LABEL}` : ''}.md`;
  await writeFile(fileURLToPath(new URL(`../results/${name}`, import.meta.url)), md);
  console.log(md);
}

await main();
