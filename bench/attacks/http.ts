import { writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HTTP_ATTACKS, type Attack } from './http-attacks.ts';
import { Watch, settle, startService, type LegitReport, type Service } from './service.ts';

/**
 * Replays the HTTP attacks of issue 27 against the real service, started as its own OS process
 * with its defaults (plus API auth, memfs Basic auth and a 1 MB memfs), and reports per attack:
 * RSS before, at its peak and after (from /proc, MiB), the answers by status (5xx counted; 507 is
 * memfs's documented "full"), and whether a legitimate client (127.0.0.1, a fresh connection
 * every 250 ms, `GET /api/v3/process` with a token) was served within 1 s throughout.
 *   node_modules/.bin/node bench/attacks/http.ts [threads, default 0] [attack names, comma-separated] [fresh]
 * Writes bench/results/attacks-http-<date>[-threads<N>][-fresh].{json,md}. `runHttpAttacks` is the
 * runner, for a combined runner to import.
 */

export interface AttackResult {
  name: string;
  what: string;
  rss_before_mb: number;
  rss_peak_mb: number;
  rss_after_mb: number;
  /** Peak minus before. */
  rss_growth_mb: number;
  statuses: Record<string, number>;
  /** Answers 500 and above; `documented_507` of them is memfs's "full". */
  five_xx: number;
  documented_507: number;
  legit: LegitReport;
  /** Every probe answered 2xx within 1 s. */
  legit_served_within_1s: boolean;
  note: string;
}

export interface HttpAttackRun {
  meta: { date: string; node: string; cpus: number; loadavg_before: number[]; loadavg_after: number[]; threads: number; shared: boolean };
  results: AttackResult[];
}

const USER = 'admin';
const PASS = 'bench-Secret-123';

/** The service the attacks run against: the defaults, with what the attacks need turned on. */
export function attackConfig(threads: number): Record<string, unknown> {
  return {
    http: { threads },
    api: { auth: { enable: true, username: USER, password: PASS } },
    storage: { memory: { max_size_mbytes: 1, auth: { enable: true, username: USER, password: PASS } } },
  };
}

async function login(url: string): Promise<string> {
  const r = await fetch(`${url}/api/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: USER, password: PASS }) });
  if (r.status !== 200) throw new Error(`login: ${r.status}`);
  return ((await r.json()) as { access_token: string }).access_token;
}

const round = (x: number) => Math.round(x * 10) / 10;

async function runOne(svc: Service, attack: Attack, token: string): Promise<AttackResult> {
  await settle(2000);
  const before = svc.rss();
  const watch = new Watch(svc, '/api/v3/process', { authorization: `Bearer ${token}` });
  watch.start();
  const outcome = await attack.run({ url: svc.url, token, basic: { username: USER, password: PASS } });
  const { peakMb, legit } = await watch.stop();
  await settle(3000);
  const after = svc.rss();
  let fiveXx = 0;
  for (const [status, n] of Object.entries(outcome.statuses)) if (Number(status) >= 500) fiveXx += n;
  return {
    name: attack.name, what: attack.what,
    rss_before_mb: round(before), rss_peak_mb: round(peakMb), rss_after_mb: round(after), rss_growth_mb: round(peakMb - before),
    statuses: outcome.statuses, five_xx: fiveXx, documented_507: outcome.statuses['507'] ?? 0,
    legit, legit_served_within_1s: legit.probes > 0 && legit.served === legit.probes, note: outcome.note,
  };
}

/** Ordinary traffic before the first attack (authenticated API reads, file misses): code compiled, heap sized. */
async function warmUp(svc: Service, token: string): Promise<void> {
  const paths = ['/api/v3/process', '/api/v3/metadata', '/api', '/memfs/none.ts', '/api/v3/fs/mem'];
  let next = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = next++; i < 3000; i = next++) {
      const r = await fetch(svc.url + paths[i % paths.length]!, { headers: { authorization: `Bearer ${token}` } });
      await r.arrayBuffer();
    }
  }));
}

/**
 * Runs the attacks (all, or those named) one after the other against one service process
 * started for the run (`threads` serving threads) and warmed up with ordinary traffic, so each
 * attack's "before" is the RSS just before it, on a service that has been serving; `fresh` starts
 * (and warms) a process of its own for each attack instead.
 */
export async function runHttpAttacks(opts: { threads?: number; only?: readonly string[]; fresh?: boolean; log?: (line: string) => void } = {}): Promise<HttpAttackRun> {
  const threads = opts.threads ?? 0;
  const log = opts.log ?? (() => {});
  const meta = { date: new Date().toISOString(), node: process.version, cpus: availableParallelism(), loadavg_before: loadavg().map(round), loadavg_after: [] as number[], threads, shared: opts.fresh !== true };
  const attacks = HTTP_ATTACKS.filter((a) => !opts.only || opts.only.includes(a.name));
  const results: AttackResult[] = [];
  let svc: Service | undefined;
  try {
    for (const attack of attacks) {
      if (!svc || opts.fresh) {
        await svc?.stop();
        svc = await startService(attackConfig(threads));
        await warmUp(svc, await login(svc.url));
      }
      const r = await runOne(svc, attack, await login(svc.url));
      log(line(r));
      results.push(r);
    }
  } finally {
    await svc?.stop();
  }
  meta.loadavg_after = loadavg().map(round);
  return { meta, results };
}

function line(r: AttackResult): string {
  const statuses = Object.entries(r.statuses).map(([s, n]) => `${s === '0' ? 'closed' : s}: ${n}`).join(', ');
  return `${r.name}: RSS +${r.rss_growth_mb} MiB (peak ${r.rss_peak_mb}, after ${r.rss_after_mb}); 5xx ${r.five_xx}`
    + `${r.documented_507 ? ` (507 full: ${r.documented_507})` : ''}; legit ${r.legit.served}/${r.legit.probes} within 1 s`
    + ` (worst ${r.legit.worst_ms} ms); ${statuses}; ${r.note}`;
}

/** The run as a markdown table. */
export function markdown(run: HttpAttackRun): string {
  const m = run.meta;
  const rows = run.results.map((r) => `| ${r.name} | ${r.rss_before_mb} | ${r.rss_peak_mb} | **+${r.rss_growth_mb}** | ${r.rss_after_mb} `
    + `| ${r.five_xx}${r.documented_507 ? ` (507 full: ${r.documented_507})` : ''} | ${r.legit_served_within_1s ? 'yes' : '**no**'} (${r.legit.served}/${r.legit.probes}, worst ${r.legit.worst_ms} ms) `
    + `| ${Object.entries(r.statuses).map(([s, n]) => `${s === '0' ? 'closed' : s}: ${n}`).join(', ')} | ${r.note} |`);
  return [
    `# HTTP attacks (issue 27), ${m.date.slice(0, 10)}`, '',
    `\`node bench/attacks/http.ts ${m.threads}\`: the service as its own process (defaults, plus API auth, memfs Basic auth, memfs 1 MB; `
      + `\`http.threads\` ${m.threads}), ${m.shared ? 'one process for all attacks, in this order' : 'a fresh process per attack'}, warmed up with 3,000 ordinary requests. Node ${m.node}, ${m.cpus} cores, load average (1, 5, 15 min) ${m.loadavg_before.join(' / ')} before, `
      + `${m.loadavg_after.join(' / ')} after (other engineers' work shares the machine).`, '',
    '| attack | RSS before (MiB) | peak | growth | after | 5xx | legitimate client served within 1 s | answers | note |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows, '',
    ...run.results.map((r) => `- \`${r.name}\`: ${r.what}.`), '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const threads = Number(process.argv[2] ?? 0);
  const only = process.argv[3] && process.argv[3] !== 'all' ? process.argv[3].split(',') : undefined;
  const run = await runHttpAttacks({ threads, only, fresh: process.argv[4] === 'fresh', log: (l) => console.log(l) });
  const base = join(fileURLToPath(new URL('../results/', import.meta.url)), `attacks-http-${run.meta.date.slice(0, 10)}${threads ? `-threads${threads}` : ''}${run.meta.shared ? '' : '-fresh'}`);
  await writeFile(`${base}.json`, JSON.stringify(run, null, 2) + '\n');
  await writeFile(`${base}.md`, markdown(run));
  console.log(`written: ${base}.{json,md}`);
}
