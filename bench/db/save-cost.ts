import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { JsonDocument } from '../../core/store/json-document.ts';
import { dbHandle } from '../../core/process/db-document.ts';
import { storedProcess } from '../process/server.ts';

/**
 * What one db.json save costs the event loop, without HTTP or the machine's load in the figure:
 * CPU time of the main thread (from /proc, so the threadpool's file writes are not counted) per
 * render of the text and per metadata commit (render + atomic write), with 5,000 stored processes
 * as bench/db/run.ts has them. The render runs in one piece: its time is how long a save holds
 * the loop at once.
 * Run: `node bench/db/save-cost.ts [operations, default 200]`; prints JSON.
 */

const N = Number(process.argv[2] ?? 200);
const STORED = 5000;

/** CPU ms of this process's main thread (utime + stime, clock ticks of 10 ms). */
function mainCpuMs(): number {
  const s = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-save-'));
  try {
    const proc: Record<string, unknown> = {};
    const meta: Record<string, unknown> = {};
    for (let i = 0; i < STORED; i++) {
      const p = storedProcess(i);
      proc[p.id] = p;
      meta[p.id] = i % 2 ? { 'restreamer-ui': { name: `channel ${i}`, meta: { title: 'x'.repeat(200) } } } : null;
    }
    await writeFile(join(dir, 'db.json'), JSON.stringify({ version: 4, process: proc, metadata: { system: {}, process: meta } }));
    const h = dbHandle();
    const doc = await JsonDocument.open(join(dir, 'db.json'), h.options);
    const meta1 = doc.data.metadata.process;
    const id = (i: number) => `bench-${String(i % STORED).padStart(4, '0')}`;

    let cpu = mainCpuMs();
    let t0 = performance.now();
    let pieces = 0;
    for (let i = 0; i < N; i++) {
      meta1[id(i)] = { n: i };
      pieces = (h.options.format!(doc.data) as Buffer[]).length;
    }
    const render = { cpuMs: (mainCpuMs() - cpu) / N, wallMs: (performance.now() - t0) / N, pieces };

    cpu = mainCpuMs();
    t0 = performance.now();
    for (let i = 0; i < N; i++) {
      await doc.commit(() => {
        const before = meta1[id(i)];
        meta1[id(i)] = { n: -i };
        return () => { meta1[id(i)] = before; };
      });
    }
    const commit = { cpuMs: (mainCpuMs() - cpu) / N, wallMs: (performance.now() - t0) / N };
    const r2 = (x: number) => Math.round(x * 100) / 100;
    console.log(JSON.stringify({
      stored: STORED, operations: N, bytes: readFileSync(doc.path).length,
      render: { cpuMs: r2(render.cpuMs), wallMs: r2(render.wallMs), pieces: render.pieces },
      commit: { cpuMs: r2(commit.cpuMs), wallMs: r2(commit.wallMs) },
    }, null, 2));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
