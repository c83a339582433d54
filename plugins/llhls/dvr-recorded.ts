/*
 * The DVR's recorded segments as CMAF, read and remuxed when asked (`dvr-remux.ts`), with bounds a
 * stranger cannot push past: at most `MAX_REMUXING` reads and remuxes at once (a recorded segment
 * may be up to `recordings.max_segment_mbytes`; more askers wait their turn), and the last few
 * kept for the next viewers (every viewer asks for the same ones) up to `KEPT` of them and
 * `KEPT_BYTES` in all. A failed read is not kept.
 */
import { remuxRecorded, type RemuxedSegment } from './dvr-remux.ts';

/** Recorded segments read and remuxed at once, at most. */
export const MAX_REMUXING = 2;
/** Remuxed segments kept, at most. */
export const KEPT = 8;
/** Bytes of remuxed segments kept, at most (one bigger is answered, not kept). */
export const KEPT_BYTES = 32 * 1024 * 1024;

interface Kept { got: Promise<RemuxedSegment | undefined>; bytes: number }

export class RecordedRemux {
  readonly #read: (start: number) => Promise<Buffer | undefined>;
  readonly #max: { kept: number; bytes: number };
  readonly #kept = new Map<number, Kept>();
  #bytes = 0;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  /** `read`: a recorded segment's bytes by its start; `max`: other bounds of what is kept (tests). */
  constructor(read: (start: number) => Promise<Buffer | undefined>, max: { kept?: number; bytes?: number } = {}) {
    this.#read = read;
    this.#max = { kept: max.kept ?? KEPT, bytes: max.bytes ?? KEPT_BYTES };
  }

  /** Remuxes running now (at most `MAX_REMUXING`). */
  get running(): number {
    return this.#running;
  }

  /** Bytes kept now (at most `KEPT_BYTES`). */
  get keptBytes(): number {
    return this.#bytes;
  }

  /** The segment that starts at `start` as CMAF; undefined when it cannot be read or has no frames. */
  get(start: number): Promise<RemuxedSegment | undefined> {
    const hit = this.#kept.get(start);
    if (hit) return hit.got;
    const entry: Kept = { got: this.#turn(() => this.#remux(start)), bytes: 0 };
    this.#kept.set(start, entry);
    void entry.got.then((r) => this.#settle(start, entry, r));
    return entry.got;
  }

  async #remux(start: number): Promise<RemuxedSegment | undefined> {
    const ts = await this.#read(start).catch(() => undefined);
    return ts ? remuxRecorded(ts) : undefined;
  }

  /** Runs `fn` once fewer than `MAX_REMUXING` run (a finished one hands its turn to the first waiting). */
  async #turn<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= MAX_REMUXING) await new Promise<void>((r) => this.#waiting.push(r));
    else this.#running++;
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /** A remux ended: kept within the bounds (the oldest leave first), or dropped. */
  #settle(start: number, entry: Kept, r: RemuxedSegment | undefined): void {
    if (this.#kept.get(start) !== entry) return;
    const bytes = r ? r.init.length + r.fragment.length : 0;
    if (!r || bytes > this.#max.bytes) {
      this.#kept.delete(start);
      return;
    }
    entry.bytes = bytes;
    this.#bytes += bytes;
    for (const [k, e] of this.#kept) {
      if (this.#kept.size <= this.#max.kept && this.#bytes <= this.#max.bytes) break;
      if (k === start) continue;
      this.#kept.delete(k);
      this.#bytes -= e.bytes;
    }
  }
}
