import { fork, type ChildProcess } from 'node:child_process';
import { loaderArgs } from '../runtime/loader.ts';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

/**
 * Process engine benchmarks (issue 5, item 10):
 *  1. the service's own CPU and RSS while it supervises 100 lightweight ffmpeg processes
 *     (lavfi 64x64 at 5 fps, real time, to the null muxer); ffmpeg's own cost is not counted;
 *  2. start-up with 1,000 stored processes, and `GET /api/v3/process` latency (p50/p99) with them.
 * Run: `node --import tsx bench/process/run.ts [seconds of CPU measurement, default 30]`.
 * Writes bench/results/process-<date>.{json,md}.
 */

const SECONDS = Number(process.argv[2] ?? 30);
const SUPERVISED = 100;
const STORED = 1000;
const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));
const TICKS = 100; // USER_HZ
const ROUNDS = 3;

interface Server { child: ChildProcess; url: string; startupMs: number; readyMs: number; dir: string }

async function startServer(stored: number): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-process-'));
  const t0 = performance.now();
  const child = fork(SERVER, [dir, String(stored)], { execArgv: loaderArgs() });
  const msg = await new Promise<{ url: string; startupMs: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string; startupMs: number }));
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { child, dir, url: msg.url, startupMs: msg.startupMs, readyMs: performance.now() - t0 };
}

async function stopServer(s: Server): Promise<void> {
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.send('stop');
  await exited;
  await rm(s.dir, { recursive: true, force: true });
}

/** utime + stime of the process itself (children excluded), in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICKS;
}

function memKb(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}

async function api(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(url + path, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

async function supervise() {
  const s = await startServer(0);
  try {
    const pid = s.child.pid!;
    const rssIdleMb = memKb(pid, 'VmRSS') / 1024;
    for (let i = 0; i < SUPERVISED; i++) {
      await api(s.url, 'POST', '/api/v3/process', {
        id: `p${i}`, reconnect: true, reconnect_delay_seconds: 5, stale_timeout_seconds: 30,
        input: [{ id: 'in', address: 'testsrc2=size=64x64:rate=5', options: ['-re', '-f', 'lavfi'] }],
        output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
      });
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      const list = await api(s.url, 'GET', '/api/v3/process?filter=state') as { state: { exec: string; progress: { frame: number } } }[];
      const running = list.filter((p) => p.state.exec === 'running' && p.state.progress.frame > 0).length;
      if (running === SUPERVISED) break;
      if (Date.now() > deadline) throw new Error(`only ${running} of ${SUPERVISED} running`);
      await new Promise((r) => setTimeout(r, 500));
    }
    await new Promise((r) => setTimeout(r, 5000)); // settle: spawn and prelude work is over
    const c0 = cpuSeconds(pid);
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const cpuPercent = ((cpuSeconds(pid) - c0) / ((performance.now() - t0) / 1000)) * 100;
    const list = await api(s.url, 'GET', '/api/v3/process?filter=state') as { state: { exec: string } }[];
    return {
      processes: SUPERVISED,
      still_running: list.filter((p) => p.state.exec === 'running').length,
      seconds: SECONDS,
      service_cpu_percent_of_one_core: Number(cpuPercent.toFixed(2)),
      service_rss_idle_mb: Number(rssIdleMb.toFixed(1)),
      service_rss_mb: Number((memKb(pid, 'VmRSS') / 1024).toFixed(1)),
      service_rss_peak_mb: Number((memKb(pid, 'VmHWM') / 1024).toFixed(1)),
    };
  } finally {
    await stopServer(s);
  }
}

async function list() {
  const s = await startServer(STORED);
  try {
    const all = await fetch(`${s.url}/api/v3/process`);
    const bytes = (await all.arrayBuffer()).byteLength;
    // Rounds of 5 s with medians: other load on a shared machine shows in single tail latencies.
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const run = async (connections: number, path: string) => {
      await autocannon({ url: s.url + path, connections, duration: 1 });
      const rounds: autocannon.Result[] = [];
      for (let i = 0; i < ROUNDS; i++) rounds.push(await autocannon({ url: s.url + path, connections, duration: 5 }));
      return {
        path, connections,
        req_per_sec: median(rounds.map((r) => Math.round(r.requests.average))),
        p50_ms: median(rounds.map((r) => r.latency.p50)),
        p99_ms: median(rounds.map((r) => r.latency.p99)),
        p99_ms_rounds: rounds.map((r) => r.latency.p99),
        non2xx: rounds.reduce((a, r) => a + r.non2xx, 0),
        errors: rounds.reduce((a, r) => a + r.errors, 0),
      };
    };
    return {
      stored: STORED,
      startup_ms: Math.round(s.startupMs),
      fork_to_listening_ms: Math.round(s.readyMs),
      list_bytes: bytes,
      latency: [await run(1, '/api/v3/process'), await run(10, '/api/v3/process'), await run(1, '/api/v3/process?filter=state')],
    };
  } finally {
    await stopServer(s);
  }
}

async function main(): Promise<void> {
  const load = loadavg()[0]!;
  const sup = await supervise();
  console.log(JSON.stringify(sup));
  const lst = await list();
  console.log(JSON.stringify(lst));
  const date = new Date().toISOString().slice(0, 10);
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const meta = { date: new Date().toISOString(), node: process.version, cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`, load_avg_1m_at_start: Number(load.toFixed(2)) };
  const aims = {
    cpu_under_5_percent: sup.service_cpu_percent_of_one_core < 5,
    list_p99_under_20_ms: lst.latency[0]!.p99_ms < 20,
    startup_under_2_s: lst.startup_ms < 2000,
  };
  await writeFile(join(dir, `process-${date}.json`), JSON.stringify({ meta, aims, supervise: sup, list: lst }, null, 2) + '\n');
  const md = [
    `# process engine benchmark, ${meta.date}`, '',
    `Node ${meta.node}, ${meta.cpus}, load average ${meta.load_avg_1m_at_start} at start. The service runs in its own process with the default plugins and log level; the driver and the ffmpeg children share the machine.`, '',
    `## Supervising ${sup.processes} ffmpeg processes (lavfi 64x64 @ 5 fps, -re, to -f null)`, '',
    '| measured over | service CPU (% of one core) | RSS idle | RSS with 100 | RSS peak | still running |', '|---|---:|---:|---:|---:|---:|',
    `| ${sup.seconds} s | ${sup.service_cpu_percent_of_one_core} | ${sup.service_rss_idle_mb} MB | ${sup.service_rss_mb} MB | ${sup.service_rss_peak_mb} MB | ${sup.still_running} |`, '',
    `Aim: under 5 % of one core: ${aims.cpu_under_5_percent ? 'met' : 'NOT met'}.`, '',
    `## ${lst.stored} stored processes`, '',
    `Start-up (CoreService.start: config, plugins, restore, listen): ${lst.startup_ms} ms; from fork (module loading included) to listening: ${lst.fork_to_listening_ms} ms. Aim under 2 s: ${aims.startup_under_2_s ? 'met' : 'NOT met'}.`, '',
    `\`GET /api/v3/process\` answers ${lst.list_bytes} bytes (all four parts of 1,000 processes). autocannon, 1 s of warm-up, then ${ROUNDS} rounds of 5 s; medians of the rounds (p99 of each round in brackets):`, '',
    '| path | connections | req/s | p50 ms | p99 ms | non-2xx | errors |', '|---|---:|---:|---:|---:|---:|---:|',
    ...lst.latency.map((r) => `| \`${r.path}\` | ${r.connections} | ${r.req_per_sec} | ${r.p50_ms} | ${r.p99_ms} (${r.p99_ms_rounds.join(', ')}) | ${r.non2xx} | ${r.errors} |`), '',
    `Aim: p99 under 20 ms (1 connection): ${aims.list_p99_under_20_ms ? 'met' : 'NOT met'}.`, '',
  ];
  await writeFile(join(dir, `process-${date}.md`), md.join('\n'));
  console.log(md.join('\n'));
}

await main();
