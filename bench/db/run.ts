import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

/**
 * db.json write cost on the event loop (issue 11, point 11): the real service with 5,000 stored
 * processes (order stop) in a child process; one client loops metadata writes (each one saves
 * db.json before it is answered) while another measures `GET /ping` one request at a time.
 * p50/p99 of /ping are reported idle and while writes loop. Aim: p99 under 5 ms while writing.
 * Run: `node bench/db/run.ts [seconds per phase, default 10] [label]` (Node 24, type stripping).
 * Writes bench/results/db-<date>[-label].{json,md}. With BENCH_CPU_PROF=<folder> the server
 * writes a V8 CPU profile there (open it in Chrome DevTools or speedscope).
 */

const SECONDS = Number(process.argv[2] ?? 10);
const LABEL = process.argv[3] ?? '';
const STORED = 5000;
const SERVER = fileURLToPath(new URL('../process/server.ts', import.meta.url));
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

function call(url: string, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('error', reject);
    req.end(body);
  });
}

/** CPU time (ms) of a process's main thread (the event loop), from /proc: scheduling noise excluded. */
function mainThreadCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields 14 and 15 (utime, stime) in clock ticks, counted from field 3 after the name
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
}
const TICKS = 100;

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN;

async function pings(url: string, seconds: number): Promise<{ n: number; p50: number; p99: number; max: number }> {
  const lat: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const t0 = performance.now();
    await call(url, 'GET', '/ping');
    lat.push(performance.now() - t0);
  }
  lat.sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 100) / 100;
  return { n: lat.length, p50: r(pct(lat, 0.5)), p99: r(pct(lat, 0.99)), max: r(lat.at(-1)!) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-db-'));
  const prof = process.env.BENCH_CPU_PROF;
  const child: ChildProcess = fork(SERVER, [dir, String(STORED)], { execArgv: prof ? ['--cpu-prof', '--cpu-prof-dir', prof] : [] });
  try {
    const { url } = await new Promise<{ url: string }>((resolve, reject) => {
      child.once('message', (m) => resolve(m as { url: string }));
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    await pings(url, 2); // warm-up
    const pid = child.pid!;
    let cpu0 = mainThreadCpuMs(pid);
    const idle = { ...await pings(url, SECONDS), mainCpuMsPerS: 0 };
    const idleCpu = mainThreadCpuMs(pid) - cpu0;
    idle.mainCpuMsPerS = Math.round(idleCpu / SECONDS);
    cpu0 = mainThreadCpuMs(pid);
    let stop = false;
    let writes = 0;
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const status = await call(url, 'PUT', `/api/v3/process/bench-${String(i % STORED).padStart(4, '0')}/metadata/bench`, JSON.stringify({ n: i }));
        if (status !== 200) throw new Error(`metadata write: ${status}`);
        writes++;
      }
    })();
    const t0 = performance.now();
    const busy = { ...await pings(url, SECONDS), mainCpuMsPerS: 0 };
    const busyCpu = mainThreadCpuMs(pid) - cpu0;
    busy.mainCpuMsPerS = Math.round(busyCpu / SECONDS);
    stop = true;
    await writer;
    const result = {
      date: new Date().toISOString(), label: LABEL, stored: STORED, seconds: SECONDS, cpus: cpus().length, loadavg: loadavg(),
      idle, writing: { ...busy, writesPerSecond: Math.round(writes / ((performance.now() - t0) / 1000)) },
    };
    const name = `db-${result.date.slice(0, 10)}${LABEL ? `-${LABEL}` : ''}`;
    const out = fileURLToPath(new URL(`../results/${name}`, import.meta.url));
    await writeFile(`${out}.json`, JSON.stringify(result, null, 2) + '\n');
    await writeFile(`${out}.md`, [
      `# db.json writes vs /ping latency${LABEL ? ` (${LABEL})` : ''}, ${result.date}`, '',
      `${STORED} stored processes; ${SECONDS} s per phase; ${result.cpus} CPUs, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}`, '',
      '| phase | /ping n | p50 ms | p99 ms | max ms | writes/s | event-loop thread CPU ms/s |', '|---|---|---|---|---|---|---|',
      `| idle | ${idle.n} | ${idle.p50} | ${idle.p99} | ${idle.max} | - | ${idle.mainCpuMsPerS} |`,
      `| metadata writes looping | ${busy.n} | ${busy.p50} | ${busy.p99} | ${busy.max} | ${result.writing.writesPerSecond} | ${busy.mainCpuMsPerS} |`, '',
    ].join('\n'));
    console.log(JSON.stringify(result, null, 2));
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.send('stop');
    await exited;
    agent.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
