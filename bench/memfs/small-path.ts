import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { loaderArgs } from '../runtime/loader.ts';
import { PLAYLIST_236, startCore } from './servers.ts';
import { ask, median, needWrk, wrk, type WrkRun } from './wrk.ts';

/**
 * The small-file path (issue 29, point 6): a 236 B live playlist from memfs, the service (the
 * sessions plugin on with its default settings: loopback is on the ignore list, so every request
 * runs the sessions taps and is not counted; `http.threads: 0`) against a bare `node:http` server
 * in its own process answering the same bytes with the same headers from a Buffer. Measured with
 * `wrk` (one client thread, on the same cores), rounds alternating which server goes first;
 * medians. Per server: req/s, p99, the server's CPU (% of one core) and its user and system CPU per request
 * (user: the JavaScript, node's and ours; system: the sockets, which load on the machine moves most).
 *
 * Needs `wrk` (Debian: `apt-get install wrk`). `BENCH_CPU_PROF=<dir>` runs both servers with
 * `--cpu-prof` (in <dir>/serve-core and <dir>/serve-bare; read with bench/memfs/cpu-prof-top.ts).
 * Run: `node bench/memfs/small-path.ts [seconds per round, default 3] [rounds, default 5]
 * [connections, default 50] [file tag, e.g. before]`. Writes bench/results/small-path-<date>[-tag].md.
 */

const SECONDS = Number(process.argv[2] ?? 3);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONNECTIONS = Number(process.argv[4] ?? 50);
const TAG = process.argv[5] ? `-${process.argv[5]}` : '';
const PROF = process.env.BENCH_CPU_PROF;
const PATH = '/memfs/live/live.m3u8';

interface Server { name: string; child: ChildProcess; url: string }
interface Cpu { user: number; system: number }
interface Row { name: string; rps: number; p99: number; cpu: number; userUs: number; systemUs: number; errors: number; rounds: number[] }

async function start(name: string, args: string[]): Promise<Server> {
  const execArgv = [...loaderArgs(), ...(PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(PROF, args[0]!)}`] : [])];
  const child = fork(fileURLToPath(import.meta.url), args, { execArgv });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)));
  });
  return { name, child, url };
}

/** The service's answer headers, as the bare server must send them (node adds Date, Connection, Keep-Alive to both). */
async function serviceHeaders(url: string): Promise<string[]> {
  const r = await fetch(url);
  const body = Buffer.from(await r.arrayBuffer());
  if (r.status !== 200 || !body.equals(PLAYLIST_236)) throw new Error(`service answered ${r.status}: ${body.toString().slice(0, 100)}`);
  return [...r.headers].filter(([k]) => !['date', 'connection', 'keep-alive'].includes(k)).flat();
}

async function measure(servers: Server[]): Promise<Row[]> {
  const runs = new Map<string, WrkRun[]>(servers.map((s) => [s.name, []]));
  // per round: the server's CPU share, and its user and system µs per request
  const cpu = new Map<string, Array<{ share: number; user: number; system: number }>>(servers.map((s) => [s.name, []]));
  for (const s of servers) await wrk(s.url, 2, CONNECTIONS);
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of round % 2 ? [...servers].reverse() : servers) {
      const before = (await ask(s.child, 'cpu')) as Cpu;
      const t0 = process.hrtime.bigint();
      const run = await wrk(s.url, SECONDS, CONNECTIONS);
      const us = Number(process.hrtime.bigint() - t0) / 1000;
      const after = (await ask(s.child, 'cpu')) as Cpu;
      runs.get(s.name)!.push(run);
      const requests = run.rps * SECONDS;
      const user = after.user - before.user;
      const system = after.system - before.system;
      cpu.get(s.name)!.push({ share: (user + system) / us, user: user / requests, system: system / requests });
    }
  }
  return servers.map((s) => {
    const rs = runs.get(s.name)!;
    const cs = cpu.get(s.name)!;
    return {
      name: s.name, rps: Math.round(median(rs.map((r) => r.rps))), p99: Number(median(rs.map((r) => r.p99)).toFixed(1)),
      cpu: Math.round(median(cs.map((c) => c.share)) * 100), userUs: Number(median(cs.map((c) => c.user)).toFixed(2)),
      systemUs: Number(median(cs.map((c) => c.system)).toFixed(2)), errors: rs.reduce((n, r) => n + r.errors + r.non2xx, 0),
      rounds: rs.map((r) => Math.round(r.rps)),
    };
  });
}

const uptime = (): string => execFileSync('uptime', { encoding: 'utf8' }).trim();

async function main(): Promise<void> {
  needWrk('bench/memfs/small-path.ts');
  const service = await start('service', ['serve-core']);
  const headers = await serviceHeaders(`${service.url}${PATH}`);
  const bare = await start('bare node', ['serve-bare', JSON.stringify(headers)]);
  const servers = [{ ...bare, url: `${bare.url}${PATH}` }, { ...service, url: `${service.url}${PATH}` }];
  const upStart = uptime();
  let rows: Row[];
  try {
    rows = await measure(servers);
  } finally {
    await Promise.all(servers.map((s) => new Promise((resolve) => { s.child.once('exit', resolve); s.child.send('stop'); })));
  }
  const upEnd = uptime();
  const ratio = rows[1]!.rps / rows[0]!.rps;
  const date = new Date().toISOString();
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const file = join(dir, `small-path-${date.slice(0, 10)}${TAG}.md`);
  const text = [
    `# The small-file path: a ${PLAYLIST_236.length} B playlist from memfs against bare node, ${date}`, '',
    `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}. wrk -t1 -c${CONNECTIONS} (on the same cores), `
      + `${ROUNDS} alternating rounds of ${SECONDS} s per server after 2 s of warm-up; medians. Service: disk-fs, memfs, sessions `
      + `(default settings: loopback ignored), \`http.threads: 0\`${PROF ? ', with --cpu-prof' : ''}. Bare: node:http, the same bytes and headers from a Buffer.`, '',
    `uptime at start: \`${upStart}\``, `uptime at end: \`${upEnd}\``, '',
    '| server | req/s | vs bare | p99 ms | server CPU | user µs / request | system µs / request | errors + non-2xx | req/s per round |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map((r) => `| ${r.name} | ${r.rps} | ${(r.rps / rows[0]!.rps).toFixed(2)} | ${r.p99} | ${r.cpu} % | ${r.userUs} | ${r.systemUs} | ${r.errors} | ${r.rounds.join(', ')} |`), '',
    `Answer headers (both): ${headers.filter((_, i) => i % 2 === 0).join(', ')} (+ date, connection, keep-alive).`, '',
  ].join('\n');
  await writeFile(file, text);
  console.log(text);
  console.log(`service / bare: ${ratio.toFixed(2)}; wrote ${file}`);
}

/** A server child: the service as the default config runs the sessions plugin, no serving threads, the playlist stored. */
async function serveCore(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-small-path-'));
  const core = await startCore(dir, { http: { threads: 0 }, plugins: ['disk-fs', 'memfs', 'sessions'], sessions: { enable: true } });
  const put = await fetch(`${core.url}${PATH}`, { method: 'PUT', body: PLAYLIST_236 });
  if (put.status !== 201) throw new Error(`PUT ${PATH}: ${put.status}`);
  process.send!({ url: core.url });
  answerCpu(async () => {
    await core.close();
    await rm(dir, { recursive: true, force: true });
  });
}

/** Answers the parent's `cpu` (user and system µs so far) and `stop` (runs `stop`, exits). */
function answerCpu(stop: () => Promise<void>): void {
  process.on('message', async (m) => {
    if (m === 'cpu') process.send!(process.cpuUsage() satisfies Cpu);
    if (m !== 'stop') return;
    await stop();
    process.exit(0);
  });
}

/** A server child: the 15-line bare server, answering every request with the playlist and `headers`. */
function serveBare(headers: string[]): void {
  const server = createServer((req, res) => {
    res.writeHead(200, headers);
    res.end(PLAYLIST_236);
  });
  server.listen(0, '127.0.0.1', () => process.send!({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  answerCpu(() => new Promise((resolve) => server.close(() => resolve())));
}

if (process.argv[2] === 'serve-core') void serveCore();
else if (process.argv[2] === 'serve-bare') serveBare(JSON.parse(process.argv[3]!) as string[]);
else await main();
