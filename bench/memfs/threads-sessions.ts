import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';
import { answerParent, startCore, PLAYLIST, SEGMENT } from './servers.ts';
import { ask, median, needWrk, wrk, type WrkRun } from './wrk.ts';

/**
 * Serving threads with the sessions plugin on (issue 28): every copy of the file door runs the
 * sessions tap, so a thread answers a player's requests alone. Measured with `wrk` (one client
 * thread, on the same cores), 0 vs 2 threads, each setting its own server process, alternating
 * rounds, medians. Cases, as a player asks (sessions on: loopback counted, `max_sessions: 0`):
 * - `a`: the ~400 B playlist without `?session=`: every request a new viewer (the master answer);
 * - `b`: the same playlist with the viewer's registered `?session=<id>` (the rewritten playlist);
 * - `c1k`, `c1m`: a 1 KiB and a 1 MiB segment with `?session=<id>` (bytes counted per session);
 * - `ref`: the plain playlist with sessions off (the plugin not loaded): the reference row;
 * - `ref1m`: the 1 MiB segment with sessions off (not in the default list).
 * Per row: req/s, 2 threads / 0 threads, p99, socket errors, non-2xx, the server's CPU (all its
 * threads, % of one core), its RSS at the end, and the load average.
 *
 * Needs `wrk` (Debian: `apt-get install wrk`). `BENCH_CPU_PROF=<dir>` runs the servers with
 * `--cpu-prof` (a profile per thread in <dir>/<server>/; read with bench/memfs/cpu-prof-top.ts).
 * Run: `node bench/memfs/threads-sessions.ts [seconds per round, default 3] [rounds, default 5]
 * [connections, default 50] [cases, default ref,a,b,c1k,c1m] [threads, default 0,2] [file tag]`.
 * Writes bench/results/threads-sessions-<date>[-tag].{json,md} (the reading is added by hand).
 */

const SECONDS = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONNECTIONS = Number(process.argv[4] ?? 50);
const CASES = (process.argv[5] ?? 'ref,a,b,c1k,c1m').split(',');
const SETTINGS = (process.argv[6] ?? '0,2').split(',').map(Number);
const TAG = process.argv[7] ? `-${process.argv[7]}` : '';
const PROF = process.env.BENCH_CPU_PROF;
const SMALL = Buffer.alloc(1024, 0x47);

interface Case { key: string; name: string; sessions: boolean; path: (id: string) => string; size: number }
const ALL: Case[] = [
  { key: 'ref', name: 'playlist, sessions off', sessions: false, path: () => '/live/index.m3u8', size: PLAYLIST.length },
  { key: 'ref1m', name: 'segment 1 MiB, sessions off', sessions: false, path: () => '/live/segment.ts', size: SEGMENT.length },
  { key: 'a', name: '(a) playlist, no ?session= (master)', sessions: true, path: () => '/live/index.m3u8', size: 0 },
  { key: 'b', name: '(b) playlist ?session=<id> (rewritten)', sessions: true, path: (id) => `/live/index.m3u8?session=${id}`, size: 0 },
  { key: 'c1k', name: '(c) segment 1 KiB ?session=<id>', sessions: true, path: (id) => `/live/small.ts?session=${id}`, size: SMALL.length },
  { key: 'c1m', name: '(c) segment 1 MiB ?session=<id>', sessions: true, path: (id) => `/live/segment.ts?session=${id}`, size: SEGMENT.length },
];

interface Server { threads: number; sessions: boolean; child: ChildProcess; url: string; session: string }
interface Row {
  case: string; sessions: 'on' | 'off'; threads: number; req_per_sec: number; vs_0_threads: number; body_bytes: number;
  latency_p99_ms: number; socket_errors: number; non2xx: number; server_cpu_pct: number; load_avg_1m: number; rounds_req_per_sec: number[];
}

async function startServer(threads: number, sessions: boolean): Promise<Server> {
  const execArgv = [...loaderArgs(), ...(PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(PROF, `sessions-${sessions ? 'on' : 'off'}-${threads}-threads`)}`] : [])];
  const child = fork(fileURLToPath(import.meta.url), ['serve', String(threads), sessions ? 'on' : 'off'], { execArgv });
  const got = await new Promise<{ url: string; session: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { url: string; session: string }));
    child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
  return { threads, sessions, child, ...got };
}

/** What a case answers, checked once before it is measured (a master, a tagged playlist, the segment). */
async function check(s: Server, c: Case): Promise<number> {
  const r = await fetch(`${s.url}/memfs${c.path(s.session)}`);
  const body = Buffer.from(await r.arrayBuffer());
  const text = body.toString();
  const ok = r.status === 200 && (c.key === 'a' ? text.includes('#EXT-X-STREAM-INF') && text.includes('session=')
    : c.key === 'b' ? text.includes(`.ts?session=${s.session}`) : c.key === 'ref' ? text.startsWith('#EXTM3U') && !text.includes('session=') : body.length === c.size);
  if (!ok) throw new Error(`${c.key} on ${s.threads} threads: unexpected answer ${r.status}: ${text.slice(0, 200)}`);
  return body.length;
}

async function measure(c: Case, servers: Server[]): Promise<Row[]> {
  const group = servers.filter((s) => s.sessions === c.sessions);
  const load = loadavg()[0]!;
  const runs = new Map<number, WrkRun[]>(group.map((s) => [s.threads, []]));
  const cpu = new Map<number, number[]>(group.map((s) => [s.threads, []]));
  const bytes = new Map<number, number>();
  for (const s of group) bytes.set(s.threads, await check(s, c));
  for (const s of group) await wrk(`${s.url}/memfs${c.path(s.session)}`, 1, CONNECTIONS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 ? [...group].reverse() : group) {
      const before = (await ask(s.child, 'cpu')) as number;
      const t0 = process.hrtime.bigint();
      runs.get(s.threads)!.push(await wrk(`${s.url}/memfs${c.path(s.session)}`, SECONDS, CONNECTIONS));
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      cpu.get(s.threads)!.push(((await ask(s.child, 'cpu')) as number - before) / us);
    }
  }
  const base = median(runs.get(SETTINGS[0]!)!.map((r) => r.rps));
  return group.map((s) => {
    const rs = runs.get(s.threads)!;
    const rps = median(rs.map((r) => r.rps));
    return {
      case: c.name, sessions: c.sessions ? 'on' : 'off', threads: s.threads, req_per_sec: Math.round(rps),
      vs_0_threads: Number((rps / base).toFixed(2)), body_bytes: bytes.get(s.threads)!,
      latency_p99_ms: Number(median(rs.map((r) => r.p99)).toFixed(1)), socket_errors: rs.reduce((n, r) => n + r.errors, 0),
      non2xx: rs.reduce((n, r) => n + r.non2xx, 0), server_cpu_pct: Math.round(median(cpu.get(s.threads)!) * 100),
      load_avg_1m: Number(load.toFixed(2)), rounds_req_per_sec: rs.map((r) => Math.round(r.rps)),
    };
  });
}

const line = (r: Row) => `| ${r.case} | ${r.sessions} | ${r.threads} | ${r.req_per_sec} | ${r.vs_0_threads.toFixed(2)} | ${r.body_bytes} | ${r.latency_p99_ms} | ${r.server_cpu_pct} % | ${r.socket_errors} / ${r.non2xx} | ${r.load_avg_1m} | ${r.rounds_req_per_sec.join(', ')} |`;

async function main(): Promise<void> {
  needWrk('bench/memfs/threads-sessions.ts');
  const cases = ALL.filter((c) => CASES.includes(c.key));
  const servers: Server[] = [];
  for (const on of [false, true].filter((on) => cases.some((c) => c.sessions === on))) {
    for (const t of SETTINGS) servers.push(await startServer(t, on));
  }
  const loadStart = loadavg();
  const rows: Row[] = [];
  const rss: Record<string, number> = {};
  try {
    for (const c of cases) {
      for (const r of await measure(c, servers)) { rows.push(r); console.log(line(r)); }
    }
    for (const s of servers) rss[`sessions ${s.sessions ? 'on' : 'off'}, ${s.threads} threads`] = Math.round(((await ask(s.child, 'rss')) as number) / 1048576);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => { s.child.once('exit', resolve); s.child.send('stop'); })));
  }
  const loadEnd = loadavg();
  const meta = {
    date: new Date().toISOString(), node: process.version, cpus: `${cpus().length} x ${cpus()[0]?.model ?? '?'}`,
    load_avg_at_start: loadStart.map((x) => Number(x.toFixed(2))), load_avg_at_end: loadEnd.map((x) => Number(x.toFixed(2))),
    client: `wrk -t1 -c${CONNECTIONS}`, seconds_per_round: SECONDS, rounds: ROUNDS, threads: SETTINGS, cpu_profiles: PROF !== undefined,
  };
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const base = join(dir, `threads-sessions-${meta.date.slice(0, 10)}${TAG}${PROF ? '-prof' : ''}`);
  await writeFile(`${base}.json`, JSON.stringify({ meta, rss_mib_at_end: rss, results: rows }, null, 2) + '\n');
  await writeFile(`${base}.md`, [
    `# memfs with serving threads and the sessions plugin, measured with wrk, ${meta.date}`, '',
    `Node ${meta.node}, ${meta.cpus}, load average ${meta.load_avg_at_start.join(' ')} at start, ${meta.load_avg_at_end.join(' ')} at the end.`,
    `${meta.client} (on the same 2 cores), ${ROUNDS} alternating rounds of ${SECONDS} s per setting after 1 s of warm-up; medians.`, '',
    '| case | sessions | threads | req/s | vs 0 threads | body B | p99 ms | server CPU | socket errors / non-2xx | load 1m | req/s per round |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|', ...rows.map(line), '',
    `RSS at the end (MiB): ${Object.entries(rss).map(([k, v]) => `${k}: ${v}`).join('; ')}.`, '',
  ].join('\n'));
  console.log(`wrote ${base}.json and ${base}.md`);
}

/** A server child: the service with `threads` serving threads, sessions on or off, and a registered viewer. */
async function serve(threads: number, sessions: boolean): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-threads-sessions-'));
  const core = await startCore(dir, {
    http: { threads },
    plugins: sessions ? ['disk-fs', 'memfs', 'sessions'] : ['disk-fs', 'memfs'],
    sessions: { enable: sessions, ip_ignorelist: [], max_sessions: 0, max_bitrate_mbit: 0, session_timeout_sec: 3600 },
  });
  const put = await fetch(`${core.url}/memfs/live/small.ts`, { method: 'PUT', body: SMALL });
  if (put.status !== 201) throw new Error(`PUT small.ts: ${put.status}`);
  let session = '';
  if (sessions) {
    // as a player: the master first, then the viewer's own playlist with the id it named (registers it)
    const master = await (await fetch(`${core.url}/memfs/live/index.m3u8`)).text();
    session = /index\.m3u8\?session=([A-Za-z0-9]+)/.exec(master)?.[1] ?? '';
    if (!session) throw new Error(`no session in the master playlist: ${master}`);
    await (await fetch(`${core.url}/memfs/live/index.m3u8?session=${session}`)).text();
    // main registers it and tells every copy of the door (threads batch every 500 ms)
    await new Promise((resolve) => setTimeout(resolve, 1500));
  }
  process.send!({ url: core.url, session });
  answerParent(core, dir);
}

if (process.argv[2] === 'serve') void serve(Number(process.argv[3]), process.argv[4] === 'on');
else await main();
