import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, needWrk, wrk } from '../memfs/wrk.ts';

/**
 * Evidence for the runtime flags (issue 29, point 5): the built service (app/main.js, run
 * `node scripts/build.mjs` first) started with each V8 flag set in turn, alternating rounds: idle
 * RSS, small-playlist req/s (wrk, 32 connections), API req/s (`GET /api/v3/process`, 8
 * connections), RSS after the load and 10 s later.
 * Run: `node bench/runtime/flags.ts [rounds=3] [seconds=5] [set names...]`; writes bench/results/runtime-flags-<date>.md.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SETS: Record<string, string[]> = {
  'V8 default': ['--max-semi-space-size=0'],
  'semi 1 MB': ['--max-semi-space-size=1'],
  'semi 2 MB': ['--max-semi-space-size=2'],
  'semi 2 MB, optimize for size': ['--max-semi-space-size=2', '--optimize-for-size'],
  'semi 4 MB': ['--max-semi-space-size=4'],
  'semi 8 MB': ['--max-semi-space-size=8'],
  'semi 2 MB, single-threaded GC': ['--max-semi-space-size=2', '--single-threaded-gc'],
  'semi 2 MB, heap growing 100 %': ['--max-semi-space-size=2', '--heap-growing-percent=100'],
  'semi 2 MB, single-threaded GC, heap growing 100 %': ['--max-semi-space-size=2', '--single-threaded-gc', '--heap-growing-percent=100'],
};
/** `node bench/runtime/flags.ts 3 5 'semi 2 MB' ...`: only the named sets (all when none is named). */
const only = process.argv.slice(4);
for (const name of Object.keys(SETS)) if (only.length && !only.includes(name)) delete SETS[name];
const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const PLAYLIST = Buffer.from('#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:1\n'
  + Array.from({ length: 6 }, (_, i) => `#EXTINF:2.000,\nseg_${i}.ts\n`).join('').slice(0, 150));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function start(dir: string, flags: string[]): Promise<{ child: ChildProcess; base: string }> {
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') }, memory: { auth: { enable: false } } },
    http: { threads: 0 }, api: { auth: { enable: false } },
  }));
  const child = spawn(process.execPath, [...flags, join(ROOT, 'app/main.js'), '--config', configPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no start: ${out}`)), 20_000);
    const seen = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
  });
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return { child, base };
}

interface Row { idle: number; playlist: number; api: number; after: number; later: number }

async function one(flags: string[]): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-flags-'));
  const { child, base } = await start(dir, flags);
  try {
    await sleep(5000);
    const idle = await rssMb(child.pid!);
    const put = await fetch(`${base}/memfs/live/index.m3u8`, { method: 'PUT', body: PLAYLIST });
    if (put.status >= 300) throw new Error(`PUT ${put.status}`);
    const playlist = (await wrk(`${base}/memfs/live/index.m3u8`, seconds, 32)).rps;
    const api = (await wrk(`${base}/api/v3/process`, seconds, 8)).rps;
    const after = await rssMb(child.pid!);
    await sleep(10_000);
    return { idle, playlist, api, after, later: await rssMb(child.pid!) };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

needWrk('bench/runtime/flags.ts');
const results = new Map<string, Row[]>(Object.keys(SETS).map((k) => [k, []]));
const load = [loadavg()[0]!];
for (let r = 0; r < rounds; r++) {
  const names = Object.keys(SETS);
  for (const name of r % 2 ? names.reverse() : names) results.get(name)!.push(await one(SETS[name]!));
  load.push(loadavg()[0]!);
}
const med = (rows: Row[], k: keyof Row) => median(rows.map((x) => x[k]));
const lines = [
  `# Runtime flags: ${new Date().toISOString().slice(0, 10)}`, '',
  `Built service (app/main.js), default plugins, http.threads 0; ${rounds} alternating rounds, medians; wrk ${seconds} s per figure.`,
  `Load average (1 min) before and after each round: ${load.map((l) => l.toFixed(2)).join(', ')}.`, '',
  '| flags | idle RSS MB | playlist req/s | API req/s | RSS after load MB | RSS 10 s later MB |', '|---|---|---|---|---|---|',
  ...[...results].map(([name, rows]) => `| ${name} (\`${SETS[name]!.join(' ')}\`) | ${med(rows, 'idle').toFixed(1)} | ${Math.round(med(rows, 'playlist'))} | ${Math.round(med(rows, 'api'))} | ${med(rows, 'after').toFixed(1)} | ${med(rows, 'later').toFixed(1)} |`),
];
const file = join(ROOT, `bench/results/runtime-flags-${new Date().toISOString().slice(0, 10)}.md`);
writeFileSync(file, lines.join('\n') + '\n');
console.log(lines.join('\n'));
