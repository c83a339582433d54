import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Idle RSS and start-up (issue 29, point 7), before and after in one run: the service of each
 * checkout given (a "before" worktree runs its `core/main.ts` as it shipped; a checkout with
 * `scripts/build.mjs` is built and runs `core/main.js`, as `npm start` does) with the default and
 * the minimal config, 0 and 2 serving threads. Each round starts every combination once, in
 * alternating order; RSS (VmRSS, and Pss: RSS without the runtime binary's pages shared with other
 * processes) 8 s after the banner, start-up = spawn to the banner. Medians.
 * Run: `node bench/rss/idle.ts BEFORE_DIR [AFTER_DIR=this checkout] [rounds=5]`;
 * writes bench/results/idle-rss-<date>.md.
 */

const HERE = fileURLToPath(new URL('../../', import.meta.url));
const before = process.argv[2] ? resolve(process.argv[2]) : undefined;
const after = resolve(process.argv[3] ?? HERE);
const rounds = Number(process.argv[4] ?? 5);
if (!before) { console.error('usage: node bench/rss/idle.ts BEFORE_DIR [AFTER_DIR] [rounds]'); process.exit(2); }

const CONFIGS: Record<string, Record<string, unknown>> = {
  default: {},
  // the minimal: no rtmp/srt/graphql/events/playout/metrics (sample-config/minimal.json)
  minimal: { plugins: ['disk-fs', 'memfs'], api: { auth: { enable: false } }, sessions: { enable: false } },
};
const THREADS = [0, 2];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function entry(root: string): string {
  if (existsSync(join(root, 'scripts/build.mjs'))) {
    const b = spawnSync(process.execPath, [join(root, 'scripts/build.mjs')], { stdio: 'inherit' });
    if (b.status !== 0) throw new Error(`build failed in ${root}`);
    return existsSync(join(root, 'app/main.ts')) ? join(root, 'app/main.js') : join(root, 'core/main.js');
  }
  return existsSync(join(root, 'app/main.ts')) ? join(root, 'app/main.ts') : join(root, 'core/main.ts');
}

function memory(pid: number): { rss: number; pss: number } {
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
  const pss = Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))![1]) / 1024;
  return { rss, pss };
}

interface Sample { rss: number; pss: number; startMs: number }

async function one(main: string, config: Record<string, unknown>, threads: number): Promise<Sample> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-idle-'));
  const configPath = join(dir, 'config.json');
  await writeFile(configPath, JSON.stringify({
    address: '127.0.0.1:0', update_check: false, db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } },
    ...config, http: { threads },
  }));
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('CORE_') || k === 'MALLOC_ARENA_MAX') delete env[k];
  const t0 = performance.now();
  const child = spawn(process.execPath, [main, '--config', configPath], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    let err = '';
    await new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no banner: ${err}`)), 30_000);
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('listening on http')) { clearTimeout(timer); res(); }
      });
      child.once('exit', () => rej(new Error(`exited: ${err}`)));
    });
    const startMs = performance.now() - t0;
    await sleep(8000);
    return { ...memory(child.pid!), startMs };
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

const mains = { before: entry(before), after: entry(after) };
const keys: string[] = [];
for (const side of ['before', 'after'] as const) for (const c of Object.keys(CONFIGS)) for (const th of THREADS) keys.push(`${side}|${c}|${th}`);
const samples = new Map<string, Sample[]>(keys.map((k) => [k, []]));
const load: number[] = [loadavg()[0]!];
for (let r = 0; r < rounds; r++) {
  for (const k of r % 2 ? [...keys].reverse() : keys) {
    const [side, c, th] = k.split('|') as ['before' | 'after', string, string];
    samples.get(k)!.push(await one(mains[side], CONFIGS[c]!, Number(th)));
  }
  load.push(loadavg()[0]!);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rows = Object.keys(CONFIGS).flatMap((c) => THREADS.map((th) => {
  const b = samples.get(`before|${c}|${th}`)!;
  const a = samples.get(`after|${c}|${th}`)!;
  const f = (xs: Sample[], k: keyof Sample, d = 1) => med(xs.map((x) => x[k])).toFixed(d);
  return `| ${c} | ${th} | ${f(b, 'rss')} | ${f(a, 'rss')} | ${f(b, 'pss')} | ${f(a, 'pss')} | ${f(b, 'startMs', 0)} | ${f(a, 'startMs', 0)} |`;
}));
const date = new Date().toISOString().slice(0, 10);
const lines = [
  `# Idle RSS, before and after: ${date}`, '',
  `before: \`${mains.before.replace(before, '<before>')}\`; after: \`${mains.after.replace(after, '<after>')}\` (built). ${rounds} rounds, every combination once per round in alternating order, medians.`,
  'RSS 8 s after the banner (VmRSS; Pss leaves out the runtime binary\'s pages shared with other node processes); start = spawn to the banner, no stored processes.',
  `Load average (1 min) at the start and after each round: ${load.map((l) => l.toFixed(2)).join(', ')}.`, '',
  '| config | threads | RSS before MB | RSS after MB | Pss before MB | Pss after MB | start before ms | start after ms |',
  '|---|---|---|---|---|---|---|---|',
  ...rows,
];
writeFileSync(join(HERE, `bench/results/idle-rss-${date}.md`), lines.join('\n') + '\n');
console.log(lines.join('\n'));
