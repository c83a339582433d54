import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCheckout, startDeployed, type Deployed } from '../process/deployed.ts';
import { loaderArgs } from '../runtime/loader.ts';
import { PLAYLIST_236 } from './servers.ts';
import { median, needWrk, wrk, type WrkRun } from './wrk.ts';

/**
 * The small-file path as deployed (issue 46.3): a 236 B live playlist from memfs, the service
 * started as `npm start` starts it (bench/process/deployed.ts: the built JS, its relaunch, its
 * environment) in several configurations, against a bare `node:http` server in its own process
 * answering the same bytes with the same headers from a Buffer (small-path.ts's). Each
 * configuration changes one thing from the default one, so the difference of its CPU per request
 * to the default's is what that thing costs (or saves) each request:
 * - `default`: the embedded default configuration (every default plugin, sessions on with
 *   loopback on their ignore list, metrics, access rules), `http.threads` as it picks;
 * - `no sessions` (`sessions.enable: false`); `sessions counting loopback` (`sessions.ip_ignorelist: []`:
 *   every request counted, as a deployment's real viewers are), as new viewers (the playlist's URL
 *   without a session: each answer is a one-line master naming it with a fresh session id, as the
 *   reference does) and as one viewer's session (the URL that master names, as a player asks it
 *   again and again); `metrics history on` (`metrics.enable`, off by default);
 * - `minimal`: sample-config/minimal.json's plugins (`disk-fs`, `memfs`), sessions off (memfs
 *   writes without credentials: no auth plugin).
 * Measured with `wrk` (one client thread, on the same cores), rounds alternating the order of the
 * servers; medians. The servers' CPU (utime + stime, all threads) from /proc.
 * Run: `node bench/memfs/small-path-deployed.ts [seconds per round, default 3] [rounds, default 5]
 * [connections, default 50] [file tag]`. Writes bench/results/small-path-deployed-<date>[-tag].md.
 */

const SECONDS = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONNECTIONS = Number(process.argv[4] ?? 50);
const TAG = process.argv[5] ? `-${process.argv[5]}` : '';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PATH = '/memfs/live/live.m3u8';
const AUTH = { enable: true, username: 'bench', password: 'bench-pass' };
const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

interface Server { name: string; url: string; pid: number; stop(): Promise<void> }
interface Row { name: string; rps: number; p99: number; cpu: number; us: number; errors: number; rounds: number[] }

const VARIANTS: Array<{ name: string; config: Record<string, unknown>; follow?: boolean }> = [
  { name: 'default', config: {} },
  { name: 'no sessions', config: { sessions: { enable: false } } },
  { name: 'sessions counting loopback, new viewers', config: { sessions: { ip_ignorelist: [] } } },
  { name: 'sessions counting loopback, a viewer\'s session', config: { sessions: { ip_ignorelist: [] } }, follow: true },
  { name: 'metrics history on', config: { metrics: { enable: true } } },
  // no auth plugin: memfs takes writes without credentials (nothing but the bench can reach it)
  { name: 'minimal (disk-fs, memfs)', config: { plugins: ['disk-fs', 'memfs'], sessions: { enable: false }, storage: { memory: { auth: { enable: false } } } } },
];

function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

async function startService(name: string, main: string, config: Record<string, unknown>, follow = false): Promise<Server> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-small-deployed-'));
  const svc: Deployed = await startDeployed(ROOT, main, dir, { log: { level: 'warn' }, storage: { memory: { auth: AUTH } }, ...config });
  const put = await fetch(`${svc.url}${PATH}`, {
    method: 'PUT', body: PLAYLIST_236, headers: { authorization: `Basic ${Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64')}` },
  });
  if (put.status !== 201) {
    await svc.stop();
    throw new Error(`${name}: PUT ${PATH}: ${put.status}`);
  }
  let url = `${svc.url}${PATH}`;
  if (follow) {
    // the one-line master a new viewer gets names the playlist with its session
    const line = (await (await fetch(url)).text()).split('\n').filter((l) => l && !l.startsWith('#')).at(-1)!;
    url = `${svc.url}${PATH.slice(0, PATH.lastIndexOf('/') + 1)}${line}`;
  }
  return { name, url, pid: svc.pid, stop: async () => { await svc.stop(); await rm(dir, { recursive: true, force: true }); } };
}

/** The bare server (small-path.ts's), forked with the service's answer headers. */
async function startBare(headers: string[]): Promise<Server> {
  const script = fileURLToPath(new URL('./small-path.ts', import.meta.url));
  const child: ChildProcess = fork(script, ['serve-bare', JSON.stringify(headers)], { execArgv: loaderArgs() });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`bare exited (${code})`)));
  });
  return { name: 'bare node:http', url: `${url}${PATH}`, pid: child.pid!, stop: () => new Promise((r) => { child.once('exit', () => r()); child.send('stop'); }) };
}

async function answerHeaders(url: string): Promise<string[]> {
  const r = await fetch(url);
  const body = Buffer.from(await r.arrayBuffer());
  if (r.status !== 200 || !body.equals(PLAYLIST_236)) throw new Error(`answered ${r.status}: ${body.toString().slice(0, 100)}`);
  return [...r.headers].filter(([k]) => !['date', 'connection', 'keep-alive'].includes(k)).flat();
}

async function measure(servers: Server[]): Promise<Row[]> {
  const runs = new Map<string, WrkRun[]>(servers.map((s) => [s.name, []]));
  const cpu = new Map<string, Array<{ share: number; us: number }>>(servers.map((s) => [s.name, []]));
  for (const s of servers) await wrk(s.url, 2, CONNECTIONS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const c0 = cpuSeconds(s.pid);
      const t0 = process.hrtime.bigint();
      const run = await wrk(s.url, SECONDS, CONNECTIONS);
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const used = cpuSeconds(s.pid) - c0;
      runs.get(s.name)!.push(run);
      cpu.get(s.name)!.push({ share: used / secs, us: (used * 1e6) / (run.rps * SECONDS) });
    }
  }
  return servers.map((s) => {
    const rs = runs.get(s.name)!;
    const cs = cpu.get(s.name)!;
    return {
      name: s.name, rps: Math.round(median(rs.map((r) => r.rps))), p99: Number(median(rs.map((r) => r.p99)).toFixed(1)),
      cpu: Math.round(median(cs.map((c) => c.share)) * 100), us: Number(median(cs.map((c) => c.us)).toFixed(1)),
      errors: rs.reduce((n, r) => n + r.errors + r.non2xx, 0), rounds: rs.map((r) => Math.round(r.rps)),
    };
  });
}

const uptime = (): string => execFileSync('uptime', { encoding: 'utf8' }).trim();

function report(rows: Row[], headers: string[], up0: string, up1: string): string {
  const bare = rows[0]!;
  const base = rows[1]!;
  return [
    `# The small-file path as deployed: a ${PLAYLIST_236.length} B playlist from memfs against bare node, ${new Date().toISOString()}`, '',
    `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}. Commit: ${execFileSync('git', ['-C', ROOT, 'log', '-1', '--format=%h %s']).toString().trim().slice(0, 100)}.`,
    `wrk -t1 -c${CONNECTIONS} (on the same cores), ${ROUNDS} alternating rounds of ${SECONDS} s per server after 2 s of warm-up; medians.`,
    'The service as `npm start` runs it (bench/process/deployed.ts), log level warn, `storage.memory.auth` on (for the one PUT).',
    'CPU per request: the server\'s utime + stime (all threads) over the round, by the requests wrk counted.', '',
    `uptime at start: \`${up0}\``, `uptime at end: \`${up1}\``, '',
    '| server | req/s | vs bare | p99 ms | server CPU | CPU µs / request | over bare, µs | over default, µs | errors + non-2xx | req/s per round |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r, i) => `| ${r.name} | ${r.rps} | ${(r.rps / bare.rps).toFixed(2)} | ${r.p99} | ${r.cpu} % | ${r.us} | ${i ? (r.us - bare.us).toFixed(1) : ''} | ${i > 1 ? (r.us - base.us).toFixed(1) : ''} | ${r.errors} | ${r.rounds.join(', ')} |`), '',
    'A negative "over default" is what turning that off saves per request; a positive one what turning it on costs.',
    `Answer headers (all): ${headers.filter((_, i) => i % 2 === 0).join(', ')} (+ date, connection, keep-alive).`, '',
  ].join('\n');
}

async function main(): Promise<void> {
  needWrk('bench/memfs/small-path-deployed.ts');
  const entry = buildCheckout(ROOT);
  const servers: Server[] = [];
  try {
    for (const v of VARIANTS) servers.push(await startService(v.name, entry, v.config, v.follow));
    const headers = await answerHeaders(servers[0]!.url);
    servers.unshift(await startBare(headers));
    const up0 = uptime();
    const rows = await measure(servers);
    const text = report(rows, headers, up0, uptime());
    const dir = join(ROOT, 'bench/results');
    await mkdir(dir, { recursive: true });
    const file = join(dir, `small-path-deployed-${new Date().toISOString().slice(0, 10)}${TAG}.md`);
    await writeFile(file, text);
    console.log(text);
    console.log(`wrote ${file}`);
  } finally {
    for (const s of servers) await s.stop().catch(() => undefined);
  }
}

await main();
