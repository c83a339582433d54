/*
 * The index of one recording (pure): its segments by wall-clock start, the continuous spans they
 * form, the segments a cut needs, and which ones retention drops. Kept sorted by start.
 */

/** One stored segment. */
export interface Segment {
  /** Unix milliseconds of its first keyframe. */
  start: number;
  /** Milliseconds of media. */
  duration: number;
  bytes: number;
  /** Its path in the recording's filesystem. */
  file: string;
}

/** A continuous stretch of recorded media. */
export interface Span {
  start: number;
  duration: number;
}

/** Segments whose start is at most this after the end of the one before belong to one span. */
export const JOIN_MS = 1000;

const end = (s: Segment | Span) => s.start + s.duration;

/** `next` starts a new span after `prev` (a gap: another publish, other timestamps). */
export const isGap = (prev: Segment | Span, next: Segment): boolean => next.start > end(prev) + JOIN_MS;

export class SegmentIndex {
  readonly list: Segment[];
  #bytes = 0;
  /** Segments removed since this index was made: `list[i]` is the `dropped + i`-th (a playlist's media sequence). */
  dropped = 0;
  /** Gaps (playlist discontinuities) that left with removed segments. */
  droppedGaps = 0;

  /** Takes `list` as its own (sorted here). */
  constructor(list: Segment[]) {
    this.list = list;
    list.sort((a, b) => a.start - b.start);
    for (const s of list) this.#bytes += s.bytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  add(seg: Segment): void {
    let i = this.list.length;
    while (i > 0 && this.list[i - 1]!.start > seg.start) i--;
    this.list.splice(i, 0, seg);
    this.#bytes += seg.bytes;
  }

  /** Drops these segments (as found by identity or by file). */
  remove(segs: readonly Segment[]): void {
    const files = new Set(segs.map((s) => s.file));
    for (let i = this.list.length - 1; i >= 0; i--) {
      const s = this.list[i]!;
      if (!files.has(s.file)) continue;
      const next = this.list[i + 1];
      if (next && isGap(s, next)) this.droppedGaps++;
      this.list.splice(i, 1);
      this.#bytes -= s.bytes;
      this.dropped++;
    }
  }

  /** The spans that overlap `[from, to]` (whole spans, not clipped). */
  spans(from = -Infinity, to = Infinity): Span[] {
    const out: Span[] = [];
    let cur: Span | undefined;
    for (const s of this.list) {
      if (cur && !isGap(cur, s)) {
        cur.duration = Math.max(end(cur), end(s)) - cur.start;
        continue;
      }
      if (cur) out.push(cur);
      cur = { start: s.start, duration: s.duration };
    }
    if (cur) out.push(cur);
    return out.filter((s) => end(s) >= from && s.start <= to);
  }

  /**
   * The segments a cut of `[start, start + duration)` reads: from the one holding `start` (or the
   * first after it, when `start` falls in a gap) on, within that one span. Empty when nothing
   * was recorded at or after `start`.
   */
  covering(start: number, duration: number): Segment[] {
    const stop = start + duration;
    const i = this.list.findIndex((s) => end(s) > start);
    if (i < 0 || this.list[i]!.start >= stop) return [];
    const out = [this.list[i]!];
    for (let j = i + 1; j < this.list.length; j++) {
      const s = this.list[j]!;
      const prev = out[out.length - 1]!;
      if (end(prev) >= stop || isGap(prev, s)) break;
      out.push(s);
    }
    return out;
  }

  /**
   * What retention drops, oldest first: segments ended before `now - maxAgeMs`, then the oldest
   * until the total is at most `maxBytes` and the count at most `maxEntries` (0 = no such limit).
   */
  expired(now: number, maxAgeMs: number, maxBytes: number, maxEntries: number): Segment[] {
    const out: Segment[] = [];
    let bytes = this.#bytes;
    for (const [i, s] of this.list.entries()) {
      const old = maxAgeMs > 0 && end(s) < now - maxAgeMs;
      const big = maxBytes > 0 && bytes > maxBytes;
      const many = maxEntries > 0 && this.list.length - i > maxEntries;
      if (!old && !big && !many) break;
      out.push(s);
      bytes -= s.bytes;
    }
    return out;
  }
}
