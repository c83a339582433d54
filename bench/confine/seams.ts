import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Children } from '../../core/process/confine/children.ts';
import { bare, median, p90, type Start } from './stats.ts';
import { detectMechanism, type Mechanism } from '../../core/process/confine/mechanism.ts';

/*
 * Issue 43, cost of the sealed sandbox: start time of a confined ffmpeg with the namespaces (noexec
 * mounts of the writable folders, a pid namespace and its init, the seccomp filter) against the
 * confinement before it (Landlock alone) and an unconfined spawn, one of each in turn, N rounds.
 *   node bench/confine/seams.ts [rounds, default 60]
 * Start: spawn to ffmpeg's first byte on stderr. Bare: spawn to exit of `true` (the wrapper's own
 * cost). Extra memory: RSS of the wrapper and the pid namespace's init (the processes the namespaces
 * keep per child).
 * Aim (issue): under 20 ms more per start. Writes bench/results/confine-seams-<date>.{json,md}.
 */

const ROUNDS = Number(process.argv[2] ?? 60);
const ARGS = ['-nostdin', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-f', 'null', '-'];
const here = mkdtempSync(join(tmpdir(), 'bench-seams-'));
for (const d of ['disk', 'db', 'rec']) mkdirSync(join(here, d));
writeFileSync(join(here, 'config.json'), '{}');
const m = detectMechanism();
const make = (mechanism: Mechanism) => new Children({
  mechanism, require: true, hidden: [join(here, 'config.json'), join(here, 'db')],
  writable: [join(here, 'disk'), join(here, 'rec')], tmpBase: join(here, 'db', 'run', 'tmp'),
});
const opts = { stdio: ['ignore', 'ignore', 'pipe'] as ('ignore' | 'pipe')[], detached: true };
const kinds: Record<string, Start> = {
  plain: (f, a) => spawn(f, a, { ...opts, env: {} }),
  landlock: (f, a) => make({ ...m, ns: false }).spawn(f, a, opts),
  sealed: (f, a) => make(m).spawn(f, a, opts),
};

function rssKb(pid: number): number {
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
}

const firstChild = (pid: number) => Number.parseInt(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8'), 10);

/** With namespaces the spawned pid is the wrapper, its child the namespace's init, then ffmpeg: their RSS. */
function extraRssKb(pid: number, depth: number): number {
  if (depth === 0) return 0;
  return rssKb(pid) + rssKb(firstChild(pid));
}

async function once(start: Start): Promise<{ ms: number; initKb: number }> {
  const t0 = process.hrtime.bigint();
  const child = start('ffmpeg', ARGS);
  const first = await new Promise<bigint>((resolve, reject) => {
    child.stderr!.once('data', () => resolve(process.hrtime.bigint()));
    child.once('error', reject);
  });
  child.stderr!.resume();
  // wait until ffmpeg itself is there (it printed, so it is)
  const initKb = extraRssKb(child.pid!, start === kinds.sealed ? 2 : 0);
  const gone = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGKILL');
  await gone;
  return { ms: Number(first - t0) / 1e6, initKb };
}



async function main(): Promise<void> {
  if (m.mechanism === 'none' || !m.ns) throw new Error(`no namespaces here: ${m.detail}`);
  const load = loadavg();
  const names = Object.keys(kinds);
  const start: Record<string, number[]> = {}, bareMs: Record<string, number[]> = {}, init: Record<string, number[]> = {};
  for (const k of names) { start[k] = []; bareMs[k] = []; init[k] = []; }
  for (let i = 0; i < ROUNDS; i++) {
    // each round in another order, so drifting load hits every kind alike
    const order = names.map((_, j) => names[(i + j) % names.length]!);
    for (const k of order) {
      const r = await once(kinds[k]!);
      start[k]!.push(r.ms);
      init[k]!.push(r.initKb);
      bareMs[k]!.push(await bare(kinds[k]!));
    }
  }
  const rows = names.map((k) => ({ kind: k, start_ms_median: median(start[k]!), start_ms_p90: p90(start[k]!), bare_ms_median: median(bareMs[k]!), init_rss_kib_median: median(init[k]!) }));
  const result = { date: new Date().toISOString(), rounds: ROUNDS, load_before: load, load_after: loadavg(), rows, detail: m.detail };
  const d = result.date.slice(0, 10);
  const out = fileURLToPath(new URL(`../results/confine-seams-${d}`, import.meta.url));
  writeFileSync(`${out}.json`, JSON.stringify(result, null, 2));
  const f = (n: number) => n.toFixed(2);
  const by = Object.fromEntries(rows.map((r) => [r.kind, r]));
  writeFileSync(`${out}.md`, [
    `# Sealed sandbox vs Landlock alone vs unconfined: ffmpeg starts, ${ROUNDS} rounds (${d})`, '',
    `Machine: 2 cores; load (1/5/15 min) before ${load.map(f).join(' / ')}, after ${result.load_after.map(f).join(' / ')} (write down what else ran). Command: \`node bench/confine/seams.ts ${ROUNDS}\`.`, '',
    '| | start to first byte, median | p90 | spawn to exit of `true`, median | RSS of the extra processes (wrapper + pid namespace init) |', '|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.kind} | ${f(r.start_ms_median)} ms | ${f(r.start_ms_p90)} ms | ${f(r.bare_ms_median)} ms | ${r.init_rss_kib_median} KiB |`), '',
    `Sealed against Landlock alone (the confinement before issue 43): ${f(by.sealed!.start_ms_median - by.landlock!.start_ms_median)} ms per start ` +
    `(bare: ${f(by.sealed!.bare_ms_median - by.landlock!.bare_ms_median)} ms): aim under 20 ms.`, '',
  ].join('\n'));
  process.stdout.write(readFileSync(`${out}.md`, 'utf8'));
}

main().finally(() => rmSync(here, { recursive: true, force: true }));
