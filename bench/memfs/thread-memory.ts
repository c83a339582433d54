import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loaderArgs } from '../runtime/loader.ts';
import { needWrk } from './wrk.ts';

/**
 * What the serving threads cost in memory (issue 29, point 4): the real service (`core/main.ts`
 * in a child process, a temp config with the default plugins, memfs and sessions on) with
 * `http.threads` 0 and 2, one after the other. Per setting: RSS (from /proc, the whole process)
 * after 10 s idle; then an HLS-like memfs load: a playlist and six 1 MiB segments PUT, read by
 * two `wrk`s (one client thread and 50 connections each: one polling the playlist, which with
 * sessions on answers each request with a new viewer's master, one going round the segments with
 * a Lua script) for LOAD_S seconds while a writer,
 * as a live encoder does, PUTs a new version of one segment and a new segment each second and
 * DELETEs the one written six seconds before; RSS peak during the load, at its end and 10 s later.
 * Per thread = (RSS with 2 threads - RSS with 0) / 2.
 *
 * Needs `wrk` (Debian: `apt-get install wrk`).
 * Run: `node bench/memfs/thread-memory.ts [tag, e.g. before|after] [load seconds, default 20] [threads, default 0,2]`.
 * Writes bench/results/thread-memory-<date>-<tag>.md.
 */

const TAG = process.argv[2] ?? 'run';
const LOAD_S = Number(process.argv[3] ?? 20);
const SETTINGS = (process.argv[4] ?? '0,2').split(',').map(Number);
const IDLE_S = 10;
const SEGMENTS = 6;
const SEGMENT = Buffer.alloc(1024 * 1024, 0x47);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Figures { threads: number; idle: number; peak: number; end: number; after: number; requests: number; non2xx: number; writes: number }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number) => (bytes / 1048576).toFixed(1);

/** The whole process's resident set (all its threads), from /proc. */
function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

function playlist(first: number): string {
  const lines = ['#EXTM3U', '#EXT-X-VERSION:3', '#EXT-X-TARGETDURATION:2', `#EXT-X-MEDIA-SEQUENCE:${first}`];
  for (let i = 0; i < SEGMENTS; i++) lines.push('#EXTINF:2.000000,', `seg${i}.ts`);
  return `${lines.join('\n')}\n`;
}

async function put(base: string, path: string, body: Uint8Array | string): Promise<void> {
  const r = await fetch(`${base}/memfs/live/${path}`, { method: 'PUT', body: typeof body === 'string' ? body : new Uint8Array(body) });
  await r.arrayBuffer();
  if (r.status !== 201 && r.status !== 204) throw new Error(`PUT ${path}: ${r.status}`);
}

/** The built entry as `npm start` runs it, or `core/main.ts` of a tree without a build step (a "before" checkout). */
function entry(): string[] {
  const build = join(ROOT, 'scripts/build.mjs');
  if (!existsSync(build)) return [...loaderArgs(), join(ROOT, 'core/main.ts')];
  execFileSync(process.execPath, [build], { stdio: 'inherit' });
  return [join(ROOT, 'app/main.js')];
}

/** Starts the service with a temp config; resolves with the child and its base URL (from its start-up line). */
async function start(dir: string, threads: number): Promise<{ child: ChildProcess; base: string }> {
  await mkdir(join(dir, 'disk'), { recursive: true });
  const config = join(dir, 'config.json');
  await writeFile(config, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, log: { level: 'error' }, db: { dir: join(dir, 'db') },
    storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
    http: { threads },
    sessions: { enable: true, ip_ignorelist: [], max_sessions: 0, max_bitrate_mbit: 0 },
  }));
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_'))), CORE_LOG_STDOUT: 'false' };
  const child = spawn(process.execPath, [...entry(), '--config', config], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const base = await new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`service exited (${code}):\n${err}`)));
  });
  return { child, base };
}

/** A live encoder: each second a new version of one segment, a new segment, and the one from six seconds before deleted. */
function writer(base: string): { stop(): Promise<number> } {
  let n = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = Date.now();
      await put(base, `seg${n % SEGMENTS}.ts`, SEGMENT);
      await put(base, `new${n}.ts`, SEGMENT);
      if (n >= SEGMENTS) await fetch(`${base}/memfs/live/new${n - SEGMENTS}.ts`, { method: 'DELETE' }).then((r) => r.arrayBuffer());
      await put(base, 'index.m3u8', playlist(n));
      n++;
      await sleep(Math.max(0, 1000 - (Date.now() - t0)));
    }
  })();
  return { stop: async () => { running = false; await loop; return n; } };
}

/** One wrk (one client thread, 50 connections, with `script` when given); resolves with requests and non-2xx. */
function wrkRun(url: string, script?: string): Promise<{ requests: number; non2xx: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', ['-t1', '-c50', `-d${LOAD_S}s`, ...(script ? ['-s', script] : []), url], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
    child.on('error', reject);
    child.on('exit', () => resolve({
      requests: Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN),
      non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    }));
  });
}

/** Players: one wrk polling the playlist (no `session`: each answer a new viewer's master), one going round the segments. */
async function readLoad(base: string, script: string): Promise<{ requests: number; non2xx: number }> {
  const runs = await Promise.all([wrkRun(`${base}/memfs/live/index.m3u8`), wrkRun(`${base}/`, script)]);
  return { requests: runs[0]!.requests + runs[1]!.requests, non2xx: runs[0]!.non2xx + runs[1]!.non2xx };
}

async function measure(threads: number, script: string): Promise<Figures> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-thread-memory-'));
  const { child, base } = await start(dir, threads);
  const pid = child.pid!;
  try {
    await sleep(IDLE_S * 1000);
    const idle = rss(pid);
    for (let i = 0; i < SEGMENTS; i++) await put(base, `seg${i}.ts`, SEGMENT);
    await put(base, 'index.m3u8', playlist(0));
    let peak = 0;
    const sampler = setInterval(() => { peak = Math.max(peak, rss(pid)); }, 250);
    const w = writer(base);
    const read = await readLoad(base, script);
    const writes = await w.stop();
    clearInterval(sampler);
    const end = rss(pid);
    peak = Math.max(peak, end);
    await sleep(IDLE_S * 1000);
    return { threads, idle, peak, end, after: rss(pid), ...read, writes };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  }
}

function report(rows: Figures[], uptimeStart: string, uptimeEnd: string): string {
  const zero = rows.find((r) => r.threads === 0);
  const per = (r: Figures, k: 'idle' | 'end' | 'after') => (zero && r.threads > 0 ? mib((r[k] - zero[k]) / r.threads) : '-');
  return [
    `# Serving threads' memory (issue 29, point 4), ${TAG}, ${new Date().toISOString()}`, '',
    `Node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? '?'}. \`uptime\` at start: ${uptimeStart}; at the end: ${uptimeEnd}.`,
    `The service (\`${entry().at(-1)!.slice(ROOT.length)}\`, default plugins, memfs, sessions on with loopback counted) in a child process; RSS of the`,
    `whole process from /proc. Idle after ${IDLE_S} s; load: for ${LOAD_S} s two wrk -t1 -c50, one on the playlist (a new viewer's master each),`,
    `one round ${SEGMENTS} x 1 MiB segments; a writer each second replacing one segment, adding one and deleting the one six`,
    `seconds old; "10 s after" is ${IDLE_S} s after the load ended. MiB.`, '',
    '| threads | idle | peak in load | end of load | 10 s after | after / idle | per thread idle | per thread end | per thread 10 s after | requests | non-2xx | write rounds |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.threads} | ${mib(r.idle)} | ${mib(r.peak)} | ${mib(r.end)} | ${mib(r.after)} | ${(r.after / r.idle).toFixed(2)} | ${per(r, 'idle')} | ${per(r, 'end')} | ${per(r, 'after')} | ${r.requests} | ${r.non2xx} | ${r.writes} |`),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  needWrk('bench/memfs/thread-memory.ts');
  const work = await mkdtemp(join(tmpdir(), 'bench-thread-memory-wrk-'));
  const script = join(work, 'round.lua');
  const paths = [...Array.from({ length: SEGMENTS }, (_, i) => `/memfs/live/seg${i}.ts`)];
  await writeFile(script, `local paths = { ${paths.map((p) => `"${p}"`).join(', ')} }\nlocal i = 0\n`
    + 'request = function()\n  i = i + 1\n  return wrk.format("GET", paths[(i % #paths) + 1])\nend\n');
  const uptimeStart = execFileSync('uptime').toString().trim();
  const rows: Figures[] = [];
  try {
    for (const t of SETTINGS) {
      const r = await measure(t, script);
      rows.push(r);
      console.log(`threads ${t}: idle ${mib(r.idle)}, peak ${mib(r.peak)}, end ${mib(r.end)}, 10 s after ${mib(r.after)} MiB`);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const md = report(rows, uptimeStart, execFileSync('uptime').toString().trim());
  const out = fileURLToPath(new URL(`../results/thread-memory-${new Date().toISOString().slice(0, 10)}-${TAG}.md`, import.meta.url));
  await writeFile(out, md);
  console.log(md);
}

await main();
