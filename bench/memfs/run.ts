import { fork, type ChildProcess } from 'node:child_process';
import { loaderArgs } from '../runtime/loader.ts';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import { serve, PLAYLIST, SEGMENT } from './servers.ts';
import { writeReport, type CaseResult } from './report.ts';

/**
 * memfs benchmark: GET of a ~400 B playlist (req/s) and of a 1 MiB segment (GB/s) through
 * `/memfs`, beside a bare node:http server sending the same Buffers with the same headers,
 * 100 connections each. The servers run in a child process, autocannon here. The two servers
 * are measured in alternating short rounds and the median round counts, so that load from
 * other processes on the machine hits both alike.
 *
 * Run: `node --import tsx bench/memfs/run.ts [seconds per round, default 2] [rounds, default 5]`.
 * Writes bench/results/memfs-<date>.{json,md}.
 */

const CONNECTIONS = 100;
const SECONDS = Number(process.argv[2] ?? 2);
const ROUNDS = Number(process.argv[3] ?? 5);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['serve'], { execArgv: loaderArgs() });
  const urls = await new Promise<{ core: string; bare: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { core: string; bare: string }));
    child.once('exit', (code) => reject(new Error(`server process exited (${code})`)));
  });
  const load = loadavg()[0]!;
  const results: CaseResult[] = [];
  const cases = [
    { name: 'playlist ~400 B', path: '/live/index.m3u8', size: PLAYLIST.length },
    { name: 'segment 1 MiB', path: '/live/segment.ts', size: SEGMENT.length },
  ];
  try {
    for (const c of cases) {
      const url = { core: `${urls.core}/memfs${c.path}`, bare: `${urls.bare}${c.path}` };
      const runs = { core: [] as autocannon.Result[], bare: [] as autocannon.Result[] };
      for (const s of ['bare', 'core'] as const) await autocannon({ url: url[s], connections: CONNECTIONS, duration: 1 }); // warm-up
      for (let round = 0; round < ROUNDS; round++) {
        const order: Array<'core' | 'bare'> = round % 2 ? ['core', 'bare'] : ['bare', 'core'];
        for (const s of order) {
          runs[s].push(await autocannon({ url: url[s], connections: CONNECTIONS, duration: SECONDS }));
        }
      }
      for (const s of ['bare', 'core'] as const) {
        const rs = runs[s];
        const row: CaseResult = {
          case: c.name, server: s,
          req_per_sec: Math.round(median(rs.map((r) => r.requests.average))),
          gbytes_per_sec: Number(((median(rs.map((r) => r.requests.average)) * c.size) / 1e9).toFixed(3)),
          latency_p50_ms: median(rs.map((r) => r.latency.p50)),
          latency_p99_ms: median(rs.map((r) => r.latency.p99)),
          errors: rs.reduce((n, r) => n + r.errors, 0),
          non2xx: rs.reduce((n, r) => n + r.non2xx, 0),
          rounds_req_per_sec: rs.map((r) => Math.round(r.requests.average)),
        };
        results.push(row);
        console.log(JSON.stringify(row));
      }
    }
  } finally {
    child.send('stop');
  }
  await writeReport(results, {
    date: new Date().toISOString(), node: process.version, cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
    load_avg_1m_at_start: Number(load.toFixed(2)), connections: CONNECTIONS, seconds_per_round: SECONDS, rounds: ROUNDS,
  });
}

if (process.argv[2] === 'serve') void serve();
else await main();
