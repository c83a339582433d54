import { connect } from 'node:net';
import { fuzzCase, type FuzzCase } from './fuzz-gen.ts';

/*
 * Sends fuzz cases to an RTMP port, `lanes` connections at a time. Shared by fuzz.test.ts and
 * bench/attacks/rtmp.ts.
 */

export interface FuzzRun {
  cases: number;
  /** Cases per generator. */
  byGenerator: Record<string, number>;
  /** Cases whose connection the server had not closed `closeWithinMs` after the client ended it. */
  lingering: number;
  /** Set when the run stopped early (`stop()` returned true): the index of the case being sent. */
  stoppedAt?: number;
}

export interface FuzzOptions {
  port: number;
  seed: number;
  cases: number;
  lanes?: number;
  /** First case index (to replay a range). */
  from?: number;
  localAddress?: string;
  /** Polled between cases; true stops the run (e.g. the service exited). */
  stop?: () => boolean;
  closeWithinMs?: number;
}

/** One case: connect, write its segments, keep it open `holdMs`, end; resolves when closed. */
function sendCase(port: number, c: FuzzCase, localAddress: string | undefined, closeWithinMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', localAddress });
    let timer: NodeJS.Timeout | undefined;
    s.on('error', () => {});
    // read (and drop) what the server answers: a client that does not read holds the server's writes
    s.resume();
    s.once('close', () => { clearTimeout(timer); resolve(true); });
    s.once('connect', async () => {
      for (const seg of c.segments) {
        if (s.destroyed) break;
        s.write(seg);
        await new Promise((r) => setImmediate(r));
      }
      if (c.holdMs) await new Promise((r) => setTimeout(r, c.holdMs));
      s.end();
      timer = setTimeout(() => { s.destroy(); resolve(false); }, closeWithinMs);
    });
  });
}

export async function runFuzz(o: FuzzOptions): Promise<FuzzRun> {
  const from = o.from ?? 0;
  const lanes = o.lanes ?? 16;
  const run: FuzzRun = { cases: 0, byGenerator: {}, lingering: 0 };
  let next = from;
  const lane = async () => {
    while (next < from + o.cases && run.stoppedAt === undefined) {
      const i = next++;
      if (o.stop?.()) { run.stoppedAt = i; return; }
      const c = fuzzCase(o.seed, i);
      run.byGenerator[c.generator] = (run.byGenerator[c.generator] ?? 0) + 1;
      if (!await sendCase(o.port, c, o.localAddress, o.closeWithinMs ?? 10_000)) run.lingering++;
      run.cases++;
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return run;
}
