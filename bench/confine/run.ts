import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Children } from '../../core/process/confine/children.ts';
import { bare, median, p90, type Start } from './stats.ts';
import { detectMechanism } from '../../core/process/confine/mechanism.ts';

/*
 * Issue 26, cost of confinement: start time and memory of a confined ffmpeg against an unconfined
 * one, each started the service's way (the confined one through the core's children service, so
 * the rule computation counts too), alternating one of each, N pairs.
 *   node bench/confine/run.ts [pairs, default 100]
 * Start time: spawn to ffmpeg's first byte on stderr (its banner: the program is running). Memory:
 * the child's VmRSS 300 ms after that, while it encodes a tiny lavfi source in real time.
 * Aim (issue): under 20 ms and 2 MB more per child. Writes bench/results/confine-<date>.{json,md}.
 */

const PAIRS = Number(process.argv[2] ?? 100);
const ARGS = ['-nostdin', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-f', 'null', '-'];
const here = mkdtempSync(join(tmpdir(), 'bench-confine-'));
for (const d of ['disk', 'db']) mkdirSync(join(here, d));
writeFileSync(join(here, 'config.json'), '{}');
const children = new Children({
  mechanism: detectMechanism(), require: true, hidden: [join(here, 'config.json'), join(here, 'db')],
  writable: [join(here, 'disk')], tmpBase: join(here, 'db', 'run', 'tmp'),
});
const plain = (file: string, args: readonly string[]) => spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {}, detached: true });
const confined = (file: string, args: readonly string[]) => children.spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });

function programOf(pid: number, depth: number): number {
  for (let i = 0; i < depth; i++) pid = Number.parseInt(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8'), 10);
  return pid;
}

function rssOf(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? NaN) * 1024;
}

async function once(start: Start): Promise<{ startMs: number; rss: number }> {
  const t0 = process.hrtime.bigint();
  const child = start('ffmpeg', ARGS);
  const first = await new Promise<bigint>((resolve, reject) => {
    child.stderr!.once('data', () => resolve(process.hrtime.bigint()));
    child.once('error', reject);
  });
  child.stderr!.resume();
  await new Promise((r) => setTimeout(r, 300));
  // with namespaces the program is two levels below the pid spawned (Confinement.programDepth)
  const rss = rssOf(start === confined ? programOf(child.pid!, children.confinement.programDepth ?? 0) : child.pid!);
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
  return { startMs: Number(first - t0) / 1e6, rss };
}

async function main(): Promise<void> {
  if (children.confinement.mechanism === 'none') throw new Error(`no confinement here: ${children.confinement.detail}`);
  const load = loadavg();
  const rows = { plain: { startMs: [] as number[], rss: [] as number[] }, confined: { startMs: [] as number[], rss: [] as number[] } };
  for (let i = 0; i < PAIRS; i++) {
    // alternate which goes first, so drifting load hits both alike
    const order = i % 2 ? (['confined', 'plain'] as const) : (['plain', 'confined'] as const);
    for (const kind of order) {
      const r = await once(kind === 'plain' ? plain : confined);
      rows[kind].startMs.push(r.startMs);
      rows[kind].rss.push(r.rss);
    }
  }
  const bareMs = { plain: [] as number[], confined: [] as number[] };
  for (let i = 0; i < PAIRS; i++) {
    bareMs.plain.push(await bare(plain));
    bareMs.confined.push(await bare(confined));
  }
  const sum = (k: 'plain' | 'confined') => ({
    start_ms_median: median(rows[k].startMs), start_ms_p90: p90(rows[k].startMs), rss_mib_median: median(rows[k].rss) / 2 ** 20,
  });
  const result = { date: new Date().toISOString(), pairs: PAIRS, load_before: load, load_after: loadavg(), plain: sum('plain'), confined: sum('confined'),
    bare_true_ms_median: { plain: median(bareMs.plain), confined: median(bareMs.confined) }, detail: children.confinement.detail };
  const d = result.date.slice(0, 10);
  const out = fileURLToPath(new URL(`../results/confine-${d}`, import.meta.url));
  writeFileSync(`${out}.json`, JSON.stringify(result, null, 2));
  const f = (n: number) => n.toFixed(2);
  writeFileSync(`${out}.md`, [
    `# Confined vs unconfined ffmpeg, ${PAIRS} starts each (${d})`, '',
    `Machine load (1/5/15 min) before ${load.map(f).join(' / ')}, after ${result.load_after.map(f).join(' / ')}; ${result.detail}.`, '',
    '| | start to first byte, median | p90 | RSS after 300 ms, median |', '|---|---|---|---|',
    `| unconfined (node spawn) | ${f(result.plain.start_ms_median)} ms | ${f(result.plain.start_ms_p90)} ms | ${f(result.plain.rss_mib_median)} MiB |`,
    `| confined (children service) | ${f(result.confined.start_ms_median)} ms | ${f(result.confined.start_ms_p90)} ms | ${f(result.confined.rss_mib_median)} MiB |`,
    `| difference | ${f(result.confined.start_ms_median - result.plain.start_ms_median)} ms | | ${f(result.confined.rss_mib_median - result.plain.rss_mib_median)} MiB |`, '',
    `The confinement alone (spawn to exit of \`true\`, median of ${PAIRS}): ${f(result.bare_true_ms_median.plain)} ms plain, ` +
    `${f(result.bare_true_ms_median.confined)} ms confined (rules computed, wrapper exec'd, Landlock entered): ` +
    `${f(result.bare_true_ms_median.confined - result.bare_true_ms_median.plain)} ms more. The RSS is ffmpeg's own (with namespaces two small processes stand above it: bench/confine/seams.ts measures them).`, '',
  ].join('\n'));
  process.stdout.write(readFileSync(`${out}.md`, 'utf8'));
}

main().finally(() => rmSync(here, { recursive: true, force: true }));
