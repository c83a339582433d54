import type { Test } from 'tap';
import { Supervisor, UsageSampler, type ExecState, type SupervisorOptions } from '../../../../core/process/supervisor/index.ts';

export { alive } from '../../../helpers/net-proc.ts';

export const FFMPEG = '/usr/bin/ffmpeg';
/** A light, endless encoder: real-time (-re) so it does not eat a core of the test machine. */
export const FFMPEG_RUNNING = ['-nostdin', '-hide_banner', '-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-f', 'null', '-'];

export interface Recorded {
  sup: Supervisor;
  /** Every state entered, in order, starting with the initial 'finished'. */
  states: ExecState[];
  /** Date.now() of each entry of `states`. */
  stateTimes: number[];
  lines: string[];
  runEnds: { state: ExecState; exitCode: number | null; signal: string | null; reason?: string }[];
  runStarts: number;
}

/**
 * A supervisor with short timings (sampler tick 250 ms, grace 500 ms, reconnect delay 1 s) that records what it reports and is destroyed in teardown
 * (tap fails the file if a child or timer outlives it: the run would not end).
 */
export function supervise(t: Test, opts: Partial<SupervisorOptions> & Pick<SupervisorOptions, 'binary'>, extra: { touchOn?: RegExp } = {}): Recorded {
  const rec: Recorded = { states: ['finished'], stateTimes: [Date.now()], lines: [], runEnds: [], runStarts: 0 } as unknown as Recorded;
  const sampler = opts.sampler ?? new UsageSampler({ intervalMs: 250 });
  rec.sup = new Supervisor({
    id: 'test',
    prepare: async () => [],
    reconnect: false,
    reconnectDelaySeconds: 1,
    staleTimeoutSeconds: 0,
    limits: { cpuUsage: 0, memoryBytes: 0, waitforSeconds: 0 },
    stopGraceMs: 500,
    ...opts,
    sampler,
    onLine: (line) => {
      rec.lines.push(line);
      // what the owner's progress parser does
      if (extra.touchOn?.test(line)) rec.sup.touch();
    },
    onRunStart: () => { rec.runStarts++; },
    onRunEnd: (state, info) => { rec.runEnds.push({ state, ...info }); },
    onStateChange: (from, to) => {
      if (rec.states.at(-1) !== from) {
        rec.states.push(`!${from}` as ExecState);
        rec.stateTimes.push(Date.now());
      }
      rec.states.push(to);
      rec.stateTimes.push(Date.now());
    },
  });
  t.teardown(async () => {
    await rec.sup.destroy();
    sampler.close();
  });
  return rec;
}


export function args(list: string[]): () => Promise<string[]> {
  return async () => list;
}

/** Milliseconds between the n-th entry of state `a` and the following entry of state `b`. */
export function gap(rec: Recorded, a: ExecState, b: ExecState, n = 0): number {
  let i = -1;
  for (let k = 0; k <= n; k++) i = rec.states.indexOf(a, i + 1);
  const j = rec.states.indexOf(b, i + 1);
  if (i < 0 || j < 0) return Number.NaN;
  return rec.stateTimes[j]! - rec.stateTimes[i]!;
}
