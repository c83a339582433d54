import type { ChildProcess } from 'node:child_process';

/* What both confinement benches measure alike (run.ts, seams.ts). */

export type Start = (file: string, args: readonly string[]) => ChildProcess;

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

/** Spawn to exit of `true`: the confinement's own cost without ffmpeg's start around it. */
export async function bare(start: Start): Promise<number> {
  const t0 = process.hrtime.bigint();
  const child = start('true', []);
  await new Promise((r) => child.once('close', r));
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
