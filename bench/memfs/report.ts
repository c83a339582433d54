import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** One server in one case: medians over the rounds, and each round's req/s. */
export interface CaseResult {
  case: string;
  server: 'core' | 'bare';
  req_per_sec: number;
  gbytes_per_sec: number;
  latency_p50_ms: number;
  latency_p99_ms: number;
  errors: number;
  non2xx: number;
  rounds_req_per_sec: number[];
}

export interface RunMeta {
  date: string;
  node: string;
  cpus: string;
  load_avg_1m_at_start: number;
  connections: number;
  seconds_per_round: number;
  rounds: number;
}

/** Writes bench/results/memfs-<date>.json and .md and prints the table. */
export async function writeReport(results: CaseResult[], meta: RunMeta): Promise<void> {
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const ratio = (name: string) => {
    const core = results.find((r) => r.case === name && r.server === 'core')!.req_per_sec;
    const bare = results.find((r) => r.case === name && r.server === 'bare')!.req_per_sec;
    return bare > 0 ? Number((core / bare).toFixed(3)) : 0;
  };
  const summary = { playlist_core_vs_bare: ratio('playlist ~400 B'), segment_core_vs_bare: ratio('segment 1 MiB') };
  const base = join(dir, `memfs-${meta.date.slice(0, 10)}`);
  await writeFile(`${base}.json`, JSON.stringify({ meta, summary, results }, null, 2) + '\n');
  const lines = [
    `# memfs benchmark, ${meta.date}`, '',
    `Node ${meta.node}, ${meta.cpus}, load average ${meta.load_avg_1m_at_start} at start. autocannon with ${meta.connections} connections;`,
    `${meta.rounds} alternating rounds of ${meta.seconds_per_round} s per server after 1 s of warm-up; medians. The bare server is node:http`,
    'sending the same Buffer with the same headers. Client and servers share the machine.', '',
    '| case | server | req/s | GB/s | p50 ms | p99 ms | errors | non-2xx | req/s per round |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|',
    ...results.map((r) => `| ${r.case} | ${r.server} | ${r.req_per_sec} | ${r.gbytes_per_sec} | ${r.latency_p50_ms} | ${r.latency_p99_ms} | ${r.errors} | ${r.non2xx} | ${r.rounds_req_per_sec.join(', ')} |`),
    '', `Core / bare: playlist ${summary.playlist_core_vs_bare}, segment ${summary.segment_core_vs_bare} (aim: 0.9 or more).`, '',
  ];
  await writeFile(`${base}.md`, lines.join('\n'));
  console.log(lines.join('\n'));
}
