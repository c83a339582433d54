// The next playlist item started ahead. An item's ffmpeg needs 0.1-1 s (an encoder's delay
// included; more on a busy box) from its start to its first keyframe; started when the previous
// item ends, that time is a stall at every join, and the channel falls behind the wall clock by it,
// item after item. The relay keeps a channel clock (output media time against the wall clock, set at
// the first item and after an outage) and, when the probe at insert knows the current item's
// duration, starts the next item so that its first packet arrives when the clock reaches the current
// item's end: the start-up time before it (the longest of the last few measured, plus a margin).
// What it delivers before the current item ends is held and goes out at the join (bounded). Aims on
// the clock never add up: the channel keeps the wall clock's pace over any number of items. An item
// that ends early (an encoder flushes its delayed frames at once at the end: the item's media came
// out faster than real time) leaves a wait at its join, of that much, which is the clock keeping time.
import type { SourceRun } from './source.ts';
import type { StreamParams } from './stream-params.ts';

/** The start-up time assumed before one was measured, and the most assumed. */
const STARTUP_DEFAULT_MS = 250;
const STARTUP_MAX_MS = 3000;
/** Start-up times remembered (the longest counts). */
const STARTUPS = 3;
/** Aimed this much earlier on top of the start-up time: the relay looks every 40 ms, and a first keyframe may follow the first byte. */
const MARGIN_MS = 100;
/** Bytes held for the next item (seconds of any stream); beyond, it is dropped and started at the join. */
export const PREFETCH_MAX_BYTES = 16 * 1024 * 1024;

/** The item the run plays, as the relay got it from the playlist (compared by identity). */
type Item = object;

interface Pending {
  item: Item;
  run: SourceRun;
  held: Buffer[][];
  bytes: number;
  params: StreamParams | undefined;
  exited: boolean;
}

/** What the relay gets when the prefetched run takes over. */
export interface Adopted {
  run: SourceRun;
  held: Buffer[][];
  params: StreamParams | undefined;
  exited: boolean;
}

export class Prefetch {
  #p: Pending | undefined;
  /** The run (the current item's) that a prefetch was started for: once per item. */
  #for: SourceRun | undefined;
  #startups: number[] = [];

  get run(): SourceRun | undefined {
    return this.#p?.run;
  }

  /** Whether the next item should start now: `current`'s item ends at `endAt` on the channel clock (undefined: not known). */
  due(current: SourceRun, endAt: number | undefined, now: number): boolean {
    if (this.#for === current || this.#p || endAt === undefined || current.firstDataAt === 0) return false;
    return now >= endAt - this.#startup() - MARGIN_MS;
  }

  /** The longest of the last start-up times measured (spawn to first byte). */
  #startup(): number {
    return this.#startups.length === 0 ? STARTUP_DEFAULT_MS : Math.min(STARTUP_MAX_MS, Math.max(...this.#startups));
  }

  start(current: SourceRun, item: Item, run: SourceRun): void {
    this.#startups.push(current.firstDataAt - current.startedAt);
    if (this.#startups.length > STARTUPS) this.#startups.shift();
    this.#for = current;
    this.#p = { item, run, held: [], bytes: 0, params: undefined, exited: false };
  }

  /** Packets or parameters of `run`: held when it is the pending one (true). Past the bound it is dropped. */
  hold(run: SourceRun, packets: Buffer[] | undefined, params?: StreamParams): boolean {
    const p = this.#p;
    if (!p || p.run !== run) return false;
    if (params) p.params = params;
    if (packets) {
      p.held.push(packets);
      p.bytes += packets.length * 188;
      if (p.bytes > PREFETCH_MAX_BYTES) this.cancel();
    }
    return true;
  }

  /** `run` ended: true when it is the pending one (its end is handled when it takes over). */
  ended(run: SourceRun): boolean {
    if (this.#p?.run !== run) return false;
    this.#p.exited = true;
    return true;
  }

  /** The pending run when it plays `item` (it takes over now); a pending run of another item is dropped. */
  take(item: Item): Adopted | undefined {
    const p = this.#p;
    this.#p = undefined;
    if (!p) return undefined;
    if (p.item !== item) {
      void p.run.kill();
      return undefined;
    }
    return { run: p.run, held: p.held, params: p.params, exited: p.exited };
  }

  /** Drops the pending run; resolves when its process is gone. */
  cancel(): Promise<void> {
    const p = this.#p;
    this.#p = undefined;
    return p ? p.run.kill() : Promise.resolve();
  }
}
