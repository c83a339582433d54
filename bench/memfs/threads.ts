import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { loaderArgs } from '../runtime/loader.ts';
import { answerParent, startCore, PLAYLIST, SEGMENT } from './servers.ts';

/**
 * Serving threads (`http.threads`): req/s and GB/s of `GET /memfs/<playlist>` (~400 B) and of a
 * 1 MiB segment with 0 (one loop), 1 and 2 threads, 100 connections, and the RSS of each server.
 * Each setting is its own child process (all started at once, idle while another is measured);
 * they are measured in alternating rounds and the median round counts, so load from other
 * processes hits all alike. autocannon runs here and shares the cores with the servers.
 *
 * Run: `node bench/memfs/threads.ts [seconds per round, default 2] [rounds, default 5] [threads list, default 0,1,2] [pipelining, default 1]`.
 * Writes bench/results/threads-<date>.md.
 */

const CONNECTIONS = 100;
const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = Number(process.argv[3] ?? 5);
const SETTINGS = (process.argv[4] ?? '0,1,2').split(',').map(Number);
/** HTTP pipelining per connection: cheaper for the client per request, so the server's share shows. */
const PIPELINING = Number(process.argv[5] ?? 1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Server { threads: number; child: ChildProcess; url: string }

function ask(child: ChildProcess, message: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    child.send(message);
  });
}

async function main(): Promise<void> {
  const servers: Server[] = [];
  for (const threads of SETTINGS) {
    const child = fork(fileURLToPath(import.meta.url), ['serve', String(threads)], { execArgv: loaderArgs() });
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (m) => resolve(m as string));
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    servers.push({ threads, child, url });
  }
  const load = loadavg()[0]!;
  const lines: string[] = [];
  try {
    for (const c of [{ name: 'playlist ~400 B', path: '/live/index.m3u8', size: PLAYLIST.length }, { name: 'segment 1 MiB', path: '/live/segment.ts', size: SEGMENT.length }]) {
      const runs = new Map<number, autocannon.Result[]>(servers.map((s) => [s.threads, []]));
      const cpu = new Map<number, number[]>(servers.map((s) => [s.threads, []]));
      for (const s of servers) await autocannon({ url: `${s.url}/memfs${c.path}`, connections: CONNECTIONS, duration: 1, pipelining: PIPELINING });
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? [...servers].reverse() : servers;
        for (const s of order) {
          const before = (await ask(s.child, 'cpu')) as number;
          runs.get(s.threads)!.push(await autocannon({ url: `${s.url}/memfs${c.path}`, connections: CONNECTIONS, duration: SECONDS, pipelining: PIPELINING }));
          // the server's CPU time over the round, all its threads: how much of the machine it got
          cpu.get(s.threads)!.push(((await ask(s.child, 'cpu')) as number - before) / (SECONDS * 1e6));
        }
      }
      const base = median(runs.get(SETTINGS[0]!)!.map((r) => r.requests.average));
      for (const s of servers) {
        const rs = runs.get(s.threads)!;
        const rps = median(rs.map((r) => r.requests.average));
        const line = `| ${c.name} | ${s.threads} | ${Math.round(rps)} | ${((rps * c.size) / 1e9).toFixed(3)} | ${(rps / base).toFixed(2)} | ${median(rs.map((r) => r.latency.p99))} | ${Math.round(median(cpu.get(s.threads)!) * 100)} % | ${rs.reduce((n, r) => n + r.errors + r.non2xx, 0)} | ${rs.map((r) => Math.round(r.requests.average)).join(', ')} |`;
        lines.push(line);
        console.log(line);
      }
    }
    for (const s of servers) {
      const rss = (await ask(s.child, 'rss')) as number;
      lines.push(`| RSS after the run | ${s.threads} | ${Math.round(rss / 1048576)} MiB | | | | | | |`);
    }
  } finally {
    for (const s of servers) s.child.send('stop');
  }
  const date = new Date().toISOString();
  const md = [
    `# memfs with serving threads (http.threads), ${date}`, '',
    `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}, load average ${load.toFixed(2)} (1 min) at start.`,
    `autocannon (one process, on the same cores) with ${CONNECTIONS} connections, pipelining ${PIPELINING}; ${ROUNDS} alternating rounds of ${SECONDS} s per setting`,
    'after 1 s of warm-up; medians. Plugins disk-fs and memfs (no sessions: with the file hooks tapped, threads leave memfs reads to main).', '',
    `| case | threads | req/s | GB/s | vs ${SETTINGS[0]} | p99 ms | server CPU | errors + non-2xx | req/s per round |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...lines, '',
  ].join('\n');
  const out = fileURLToPath(new URL(`../results/threads-${date.slice(0, 10)}${PIPELINING > 1 ? `-pipelining${PIPELINING}` : ''}.md`, import.meta.url));
  await writeFile(out, md);
  console.log(md);
}

async function serve(threads: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-threads-'));
  await mkdir(dir, { recursive: true });
  const core = await startCore(dir, { http: { threads } });
  process.send!(core.url);
  answerParent(core, dir);
}

if (process.argv[2] === 'serve') void serve(Number(process.argv[3]));
else await main();
