import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { storedProcess } from './server.ts';

/**
 * Start-up with 1,000 stored processes (issue 46.4), as deployed: each checkout built by its
 * `scripts/build.mjs`, then `<its runtime> app/main.js --config <file>` (what `npm start` execs,
 * the relaunch with the runtime flags included), the `CORE_*`, `MALLOC_ARENA_MAX` and
 * `NODE_OPTIONS` variables removed. One db for every start: 1,000 processes (order stop, so no
 * ffmpeg runs; autostart on for every other one), half of them with restreamer-ui metadata.
 * Per start: the time from the spawn to the first 200 of `GET /api` (polled every 2 ms), then to
 * the first 200 of `GET /api/v3/process` (the whole list), and the CPU the service used until then
 * (user + system of all its threads, from /proc: what the load of a shared box inflates far less
 * than the wall time). The trees alternate start by start (this one, the other, ...), so both see
 * the same load; the medians and their ratio are the figures. The process list of both trees is
 * compared byte for byte (each `report.created_at` set to 0 first: it is the time of the start).
 * Run: `node bench/process/startup.ts [--tree OTHER_CHECKOUT] [--rounds 10] [--count 1000] [--prof DIR] [--write]`.
 * `--prof DIR` adds `--cpu-prof --cpu-prof-dir=DIR/<tree>` to each start (read them with
 * bench/memfs/cpu-prof-top.ts); `BENCH_NODE_ARGS` adds other flags to the service's node (`BENCH_STDOUT=<file>` keeps its stdout, e.g. for `--trace-gc`). `--write` writes bench/results/startup-<count>-<date>.md.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const args = process.argv.slice(2);
const opt = (name: string, def: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : def;
};
const ROUNDS = Number(opt('rounds', '10'));
const COUNT = Number(opt('count', '1000'));
const PROF = opt('prof', '');
const OTHER = opt('tree', '');
const WRITE = args.includes('--write');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Tree { name: string; root: string; node: string; main: string }
interface Start { api: number; list: number; cpu: number; body: string }

function tree(name: string, root: string): Tree {
  if (spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { stdio: 'inherit' }).status !== 0) throw new Error(`build failed in ${root}`);
  const r = spawnSync('bash', [join(root, 'scripts/node.sh')], { encoding: 'utf8' });
  const node = r.status === 0 && existsSync(r.stdout.trim()) ? r.stdout.trim() : process.execPath;
  // the entry moved from core/ to app/ (issue 45.3): an older tree starts from core/main.js
  const main = [join(root, 'app/main.js'), join(root, 'core/main.js')].find((f) => existsSync(f));
  if (!main) throw new Error(`${root}: neither app/main.js nor core/main.js`);
  return { name, root, node, main };
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });
}

/** config.json and db/db.json with `count` stored processes under a temp folder. */
async function prepare(count: number, port: number): Promise<{ dir: string; configPath: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-startup-'));
  await mkdir(join(dir, 'disk'), { recursive: true });
  await mkdir(join(dir, 'db'), { recursive: true });
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: `127.0.0.1:${port}`, update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
  }));
  const stored: Record<string, unknown> = {};
  const meta: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const p = storedProcess(i);
    p.config.autostart = i % 2 === 1;
    stored[p.id] = p;
    meta[p.id] = i % 2 ? { 'restreamer-ui': { name: `channel ${i}`, meta: { title: 'x'.repeat(200) } } } : null;
  }
  await writeFile(join(dir, 'db', 'db.json'), JSON.stringify({ version: 4, process: stored, metadata: { system: {}, process: meta } }));
  return { dir, configPath };
}

/** BENCH_STDOUT=<file>: every start's stdout goes there (e.g. with BENCH_NODE_ARGS=--trace-gc); opened once. */
const STDOUT = process.env.BENCH_STDOUT ? openSync(process.env.BENCH_STDOUT, 'a') : 'ignore';

function spawnService(t: Tree, configPath: string): ChildProcess {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('CORE_') || k === 'MALLOC_ARENA_MAX' || k === 'NODE_OPTIONS') delete env[k];
  const prof = PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(resolve(PROF), t.name)}`] : [];
  const extra = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(t.node, [...extra, ...prof, t.main, '--config', configPath], { env: { ...env, CORE_LOG_STDOUT: 'false' }, stdio: ['ignore', STDOUT, 'pipe'] });
  child.stderr!.resume();
  return child;
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.once('end', () => res({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.once('error', rej);
    req.end();
  });
}

/** Polls `path` every 2 ms until it answers 200 (60 s at most). */
async function first200(port: number, path: string, child: ChildProcess): Promise<string> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode})`);
    const r = await get(port, path).catch(() => ({ status: 0, body: '' }));
    if (r.status === 200) return r.body;
    await sleep(2);
  }
  throw new Error(`no 200 of ${path} within 60 s`);
}

function cpuOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function once(t: Tree, port: number, configPath: string): Promise<Start> {
  const t0 = performance.now();
  const child = spawnService(t, configPath);
  try {
    await first200(port, '/api', child);
    const api = performance.now() - t0;
    const body = await first200(port, '/api/v3/process', child);
    const list = performance.now() - t0;
    return { api, list, cpu: cpuOf(child.pid!), body };
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const uptime = () => spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
const gitHead = (root: string) => spawnSync('git', ['-C', root, 'log', '-1', '--format=%h %s'], { encoding: 'utf8' }).stdout.trim().slice(0, 100);

function report(trees: Tree[], results: Map<string, Start[]>, load0: string, load1: string, same: boolean | null): string {
  const row = (t: Tree) => {
    const r = results.get(t.name)!;
    const m = (k: 'api' | 'list' | 'cpu') => median(r.map((s) => s[k]));
    return { api: m('api'), list: m('list'), cpu: m('cpu'), each: r.map((s) => `${s.list.toFixed(0)}/${s.cpu.toFixed(0)}`).join(' ') };
  };
  const rows = trees.map((t) => ({ t, ...row(t) }));
  const lines = [
    `# Start-up with ${COUNT} stored processes (issue 46.4), ${new Date().toISOString()}`, '',
    `${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}). uptime before: \`${load0}\`; after: \`${load1}\`.`,
    `Each tree built and started as \`npm start\` starts it (\`<runtime> app/main.js --config FILE\`, its relaunch included), the default plugins,`,
    `one db of ${COUNT} processes (order stop, autostart on for every other one, restreamer-ui metadata on half); ${ROUNDS} starts per tree, alternating.`, '',
    '| tree | commit | to 200 of GET /api (ms, median) | to 200 of GET /api/v3/process (ms, median) | CPU until then (ms, median) |', '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.t.name} | ${gitHead(r.t.root)} | ${r.api.toFixed(0)} | ${r.list.toFixed(0)} | ${r.cpu.toFixed(0)} |`),
  ];
  if (rows.length === 2) {
    const [a, b] = rows as [typeof rows[0], typeof rows[0]];
    lines.push(`| ratio ${a.t.name} / ${b.t.name} | | ${(a.api / b.api).toFixed(2)} | ${(a.list / b.list).toFixed(2)} | ${(a.cpu / b.cpu).toFixed(2)} |`);
  }
  lines.push('', 'Each start, list time / CPU (ms):', '', ...rows.map((r) => `- ${r.t.name}: ${r.each}`), '');
  if (same !== null) lines.push(`The process lists (\`GET /api/v3/process\`, each report's \`created_at\`, the time of the start, set to 0) of both trees are ${same ? 'byte-identical' : 'DIFFERENT'}.`, '');
  lines.push('The CPU column is what a loaded box inflates least; the wall times move with the load (uptime above).', '');
  return lines.join('\n');
}

async function main(): Promise<void> {
  const trees = [tree('this', ROOT), ...(OTHER ? [tree('other', resolve(OTHER))] : [])];
  const port = await freePort();
  const { dir, configPath } = await prepare(COUNT, port);
  const results = new Map<string, Start[]>(trees.map((t) => [t.name, []]));
  const load0 = uptime();
  try {
    for (const t of trees) await once(t, port, configPath); // warm the page cache of each tree
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 ? [...trees].reverse() : trees;
      for (const t of order) {
        const s = await once(t, port, configPath);
        results.get(t.name)!.push(s);
        console.log(`${t.name}: /api ${s.api.toFixed(0)} ms, list ${s.list.toFixed(0)} ms, cpu ${s.cpu.toFixed(0)} ms`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // a report's created_at is when the start made it (it differs from start to start, as in the reference)
  const bodies = trees.map((t) => (results.get(t.name)!.at(-1)?.body ?? '').replace(/"report":\{"created_at":\d+/g, '"report":{"created_at":0'));
  const same = trees.length === 2 ? bodies[0] === bodies[1] : null;
  if (same === false) {
    const at = [...bodies[0]!].findIndex((c, i) => c !== bodies[1]![i]);
    for (const [i, t] of trees.entries()) await writeFile(join(tmpdir(), `startup-list-${t.name}.json`), bodies[i]!);
    console.log(`the lists differ from byte ${at}: ${JSON.stringify(bodies[0]!.slice(at - 80, at + 80))} / ${JSON.stringify(bodies[1]!.slice(at - 80, at + 80))} (both in ${tmpdir()}/startup-list-*.json)`);
  }
  const md = report(trees, results, load0, uptime(), same);
  console.log(md);
  if (WRITE) {
    const name = `startup-${COUNT}-${new Date().toISOString().slice(0, 10)}.md`;
    await writeFile(join(ROOT, 'bench/results', name), md);
    console.log(`wrote bench/results/${name}`);
  }
}

await main();
