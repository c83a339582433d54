import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCheckout, startDeployed, type Deployed, type Inspected, type Memory } from './deployed.ts';

/**
 * What a process's life leaves behind (issue 46 point 5): create/delete pairs (`POST` then
 * `DELETE /api/v3/process`, autostart off, so no ffmpeg runs) against the service as deployed
 * (deployed.ts: built, `app/main.js`, its relaunch), then 30 s idle.
 *  - Rounds of `round` pairs alternate a large process config (a 4 KB `reference`, two inputs, two
 *    outputs, options, a cleanup rule) and a small one (a 1-character reference, one input and
 *    output); 4 clients with keep-alive connections, each doing pairs one after the other.
 *  - With a BEFORE_DIR (a checkout of an older commit, its node_modules in place), both services
 *    run side by side, take the same rounds, and the order alternates from round to round, so other
 *    load on the machine hits both alike.
 *  - RSS (VmRSS, RssAnon) 10 s after the banner ("start"), after each round, and every 5 s for 30 s
 *    after the last; then the inspector is turned on (SIGUSR1) for the heap, external and
 *    ArrayBuffer figures before and after full memory-reducing collections, and RSS after
 *    malloc_trim(0): what is reachable against what the allocator keeps.
 * Run: `node_modules/.bin/node bench/process/create-delete.ts [pairs=50000] [BEFORE_DIR|-] [round=5000] [tag]`;
 * writes bench/results/process-create-delete-<date>[-tag].{md,json}.
 */

const HERE = fileURLToPath(new URL('../../', import.meta.url));
const PAIRS = Number(process.argv[2] ?? 50_000);
const BEFORE = process.argv[3] && process.argv[3] !== '-' ? resolve(process.argv[3]) : undefined;
const ROUND = Number(process.argv[4] ?? 5000);
const TAG = process.argv[5] ? `-${process.argv[5]}` : '';
const CLIENTS = 4;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const LARGE_REFERENCE = 'r'.repeat(4096);
function body(id: string, large: boolean): Record<string, unknown> {
  if (!large) {
    return {
      id, reference: 'r', autostart: false,
      input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-f', 'lavfi'] }],
      output: [{ id: 'out', address: '-', options: ['-f', 'null'] }],
    };
  }
  return {
    id, reference: LARGE_REFERENCE, autostart: false, reconnect: true, reconnect_delay_seconds: 5, stale_timeout_seconds: 30,
    options: ['-loglevel', 'level+info', '-err_detect', 'ignore_err'],
    input: [
      { id: 'video', address: 'testsrc2=size=1280x720:rate=25', options: ['-re', '-f', 'lavfi', '-thread_queue_size', '512'] },
      { id: 'audio', address: 'sine=frequency=1000:sample_rate=48000', options: ['-f', 'lavfi'] },
    ],
    output: [
      {
        id: 'hls', address: `{memfs}/${id}.m3u8`,
        options: ['-codec:v', 'libx264', '-preset', 'ultrafast', '-b:v', '1500k', '-codec:a', 'aac', '-b:a', '64k',
          '-f', 'hls', '-hls_time', '2', '-hls_list_size', '6', '-hls_flags', 'append_list+delete_segments',
          '-hls_segment_filename', `{memfs}/${id}_%04d.ts`, '-method', 'PUT'],
        cleanup: [{ pattern: `memfs:/${id}_*.ts`, max_files: 12, max_file_age_seconds: 60, purge_on_delete: true }],
      },
      { id: 'null', address: '-', options: ['-f', 'null'] },
    ],
  };
}

async function send(url: string, method: string, path: string, json?: unknown): Promise<void> {
  const r = await fetch(`${url}${path}`, {
    method, headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
}

/** `n` pairs with ids from `from`, CLIENTS at a time; ms per pair. */
async function pairs(s: Deployed, from: number, n: number, large: boolean): Promise<number> {
  let next = from;
  const end = from + n;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    for (let i = next++; i < end; i = next++) {
      const id = `cd-${i}`;
      await send(s.url, 'POST', '/api/v3/process', body(id, large));
      await send(s.url, 'DELETE', `/api/v3/process/${id}`);
    }
  }));
  return (performance.now() - t0) / n;
}

interface Side {
  name: 'before' | 'after';
  root: string;
  service: Deployed;
  dir: string;
  start: Memory;
  rounds: { kind: string; msPerPair: number; rss: number; load: number }[];
  idle: number[];
  inspected?: Inspected;
}

async function launch(name: Side['name'], root: string): Promise<Side> {
  const dir = await mkdtemp(join(tmpdir(), `bench-cd-${name}-`));
  const service = await startDeployed(root, buildCheckout(root), dir);
  return { name, root, service, dir, start: { rss: 0, anon: 0 }, rounds: [], idle: [] };
}

async function run(sides: Side[]): Promise<number[]> {
  const load = [loadavg()[0]!];
  await sleep(10_000);
  for (const s of sides) s.start = s.service.memory();
  const rounds = Math.ceil(PAIRS / ROUND);
  for (let r = 0; r < rounds; r++) {
    const large = r % 2 === 0;
    const n = Math.min(ROUND, PAIRS - r * ROUND);
    for (const s of r % 2 ? [...sides].reverse() : sides) {
      const msPerPair = await pairs(s.service, r * ROUND, n, large);
      s.rounds.push({ kind: large ? 'large' : 'small', msPerPair, rss: s.service.memory().rss, load: loadavg()[0]! });
    }
    load.push(loadavg()[0]!);
    console.log(`round ${r + 1}/${rounds} (${large ? 'large' : 'small'}): ${sides.map((s) => `${s.name} ${s.rounds.at(-1)!.rss.toFixed(1)} MB`).join(', ')}`);
  }
  for (let i = 1; i <= 6; i++) {
    await sleep(5000);
    for (const s of sides) s.idle.push(s.service.memory().rss);
  }
  load.push(loadavg()[0]!);
  // one at a time: the inspector and the collections are not what the other side should measure
  for (const s of sides) {
    s.inspected = await s.service.inspect();
    await s.service.stop();
  }
  return load;
}

const f1 = (x: number) => x.toFixed(1);

function report(sides: Side[], load: number[], uptimes: string[]): string {
  const date = new Date().toISOString().slice(0, 10);
  const head = `| | ${sides.map((s) => s.name).join(' | ')} |`;
  const sep = `|---|${sides.map(() => '---').join('|')}|`;
  const row = (label: string, f: (s: Side) => string) => `| ${label} | ${sides.map(f).join(' | ')} |`;
  const fig = (s: Side, k: 'before' | 'afterGc' | 'afterReducing', key: string) => f1(s.inspected![k][key] ?? NaN);
  const lines = [
    `# Process create/delete: what a process's life leaves behind (${date})`, '',
    `${PAIRS} create/delete pairs per service (autostart off: no ffmpeg), rounds of ${ROUND} alternating a large config (4 KB reference, 2 inputs, 2 outputs, cleanup) and a small one (1-character reference), ${CLIENTS} keep-alive clients.`,
    `Each service started as \`npm start\` starts it: built, \`node app/main.js\` with its relaunch (\`bench/process/deployed.ts\`), the default config (default plugins, \`http.threads\` default). ${sides.length > 1 ? 'Both run side by side; the order alternates per round.' : ''}`,
    ...sides.map((s) => `- ${s.name}: \`${s.root === HERE.replace(/\/$/, '') || s.root === HERE ? 'this checkout' : s.root}\` at ${gitHead(s.root)}`),
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${f1(totalmem() / 2 ** 30)} GiB; shared with other work.`,
    `Load average (1 min) at the start, after each round and after the idle: ${load.map((l) => l.toFixed(2)).join(', ')}.`,
    `uptime: \`${uptimes[0]}\` -> \`${uptimes[1]}\``, '',
    '## RSS (MB, VmRSS from /proc)', '', head, sep,
    row('start (10 s after the banner)', (s) => f1(s.start.rss)),
    ...sides[0]!.rounds.map((r, i) => row(`after round ${i + 1} (${r.kind}, ${(i + 1) * ROUND} pairs)`, (s) => `${f1(s.rounds[i]!.rss)} (${s.rounds[i]!.msPerPair.toFixed(2)} ms/pair)`)),
    ...sides[0]!.idle.map((_, i) => row(`idle ${(i + 1) * 5} s`, (s) => f1(s.idle[i]!))),
    row('**idle 30 s minus start**', (s) => `**${s.idle.at(-1)! - s.start.rss >= 0 ? '+' : ''}${f1(s.idle.at(-1)! - s.start.rss)}**`),
    '', '## After the idle, through the inspector (turned on for this: it adds a few MB)', '', head, sep,
    row('RSS / heap used / heap total / external / ArrayBuffers', (s) => ['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers'].map((k) => fig(s, 'before', k)).join(' / ')),
    row('the same after a full GC', (s) => ['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers'].map((k) => fig(s, 'afterGc', k)).join(' / ')),
    row('the same after memory-reducing GCs', (s) => ['rss', 'heapUsed', 'heapTotal', 'external', 'arrayBuffers'].map((k) => fig(s, 'afterReducing', k)).join(' / ')),
    row('RSS after malloc_trim(0) too', (s) => `${f1(s.inspected!.afterTrim.rss)} (trimmed: ${s.inspected!.trimmed})`),
    row('RssAnon at start / after trim', (s) => `${f1(s.start.anon)} / ${f1(s.inspected!.afterTrim.anon)}`),
  ];
  return lines.join('\n') + '\n';
}

function gitHead(root: string): string {
  try {
    return execSync('git rev-parse --short HEAD', { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '(no git)';
  }
}

const uptime = () => execSync('uptime', { encoding: 'utf8' }).trim();
const uptimes = [uptime()];
const sides: Side[] = [];
try {
  if (BEFORE) sides.push(await launch('before', BEFORE));
  sides.push(await launch('after', HERE.replace(/\/$/, '')));
  const load = await run(sides);
  uptimes.push(uptime());
  const text = report(sides, load, uptimes);
  const base = join(HERE, `bench/results/process-create-delete-${new Date().toISOString().slice(0, 10)}${TAG}`);
  writeFileSync(`${base}.md`, text);
  writeFileSync(`${base}.json`, JSON.stringify({ pairs: PAIRS, round: ROUND, load: load, uptimes, sides: sides.map(({ service, ...s }) => ({ ...s, pid: service.pid })) }, null, 2) + '\n');
  console.log(text);
} finally {
  for (const s of sides) {
    await s.service.stop();
    await rm(s.dir, { recursive: true, force: true });
  }
}
