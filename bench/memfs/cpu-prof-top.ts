import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

/**
 * The top self-time functions of V8 CPU profiles (`node --cpu-prof`, e.g. from
 * `BENCH_CPU_PROF=<dir> node bench/memfs/threads-sessions.ts ...`): per profile file, or summed
 * over the files whose names contain a filter, as `file:function` with its share of the busy
 * samples (idle excluded): self time of every function, and inclusive time of the project's own
 * (core/, plugins/, sdk/: where a request's time goes, callees included).
 * Run: `node bench/memfs/cpu-prof-top.ts <dir> [name filter] [top, default 25]`.
 */

interface Frame { functionName: string; url: string; lineNumber: number }
interface Node { id: number; callFrame: Frame; children?: number[] }
interface Profile { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const [dir, filter = '', topArg = '25'] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node bench/memfs/cpu-prof-top.ts <dir> [name filter] [top]');
  process.exit(2);
}
const root = process.cwd();
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const OWN = /^(core|plugins|sdk)\//;
const byFile = new Map<string, number>();
let total = 0;
const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile') && f.includes(filter)).sort();
for (const f of files) {
  const p = JSON.parse(await readFile(join(dir, f), 'utf8')) as Profile;
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  let sum = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const fr = nodes.get(p.samples[i]!)!.callFrame;
    const dt = p.timeDeltas[i] ?? 0;
    if (fr.functionName === '(idle)') continue;
    const file = fileOf(fr);
    const key = keyOf(fr);
    self.set(key, (self.get(key) ?? 0) + dt);
    byFile.set(file, (byFile.get(file) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = p.samples[i]; id !== undefined; id = parent.get(id)) {
      const f = nodes.get(id)!.callFrame;
      if (OWN.test(fileOf(f))) seen.add(keyOf(f));
    }
    for (const k of seen) inclusive.set(k, (inclusive.get(k) ?? 0) + dt);
    sum += dt;
  }
  total += sum;
  console.log(`${f}: ${(sum / 1e6).toFixed(2)} s busy`);
}
function fileOf(fr: Frame): string {
  return fr.url ? (fr.url.startsWith('file://') ? relative(root, new URL(fr.url).pathname) : fr.url) : '(native)';
}
function keyOf(fr: Frame): string {
  return `${fileOf(fr)}:${fr.functionName || '(anonymous)'}${fr.url ? `:${fr.lineNumber + 1}` : ''}`;
}
const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
  .map(([k, v]) => `${((v / total) * 100).toFixed(1).padStart(5)} %  ${(v / 1e3).toFixed(0).padStart(6)} ms  ${k}`).join('\n');
console.log(`\nself time by function (${files.length} profiles, ${(total / 1e6).toFixed(2)} s busy):\n${top(self, Number(topArg))}`);
console.log(`\nself time by file:\n${top(byFile, 15)}`);
console.log(`\ninclusive time of core/, plugins/, sdk/ functions:\n${top(inclusive, Number(topArg))}`);
