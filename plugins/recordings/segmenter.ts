import { TS_PACKET as TS, TS_SYNC as SYNC, tsPesStamps, tsPid, tsPmt, tsPrimary, tsPat, tsRandomAccess, tsUnitStart, tsUnwrap, type TsStream } from '../../sdk/index.ts';

/*
 * Cuts a live MPEG-TS packet stream into segments (pure: no I/O, no timers). A segment starts at a
 * keyframe of the primary stream (the first video stream, any PES start without video) with the
 * last PAT and PMT in front, and is cut at the first keyframe once it holds `segmentMs` of media
 * (by PTS). Wall-clock starts come from the PTS too: the first keyframe of a span is stamped with
 * `now()`, later segments of the span with that plus their PTS distance, so the segments of a span
 * touch exactly. A span ends when the source ends (`end()`) or its PTS jumps by more than
 * `JUMP_MS`; the next keyframe starts a new one.
 */

/** A PTS step larger than this (either way) ends the span: the source restarted its clock. */
export const JUMP_MS = 10_000;

/** A finished segment: its bytes (copies, owned by the receiver) and where it sits in time. */
export interface CutSegment {
  /** Unix milliseconds of its first keyframe. */
  start: number;
  /** Milliseconds of media, from the PTS. */
  duration: number;
  chunks: Buffer[];
  bytes: number;
}

export interface SegmenterOptions {
  segmentMs: number;
  /** A segment that would grow beyond this is closed early; its source is skipped up to the next keyframe. */
  maxBytes: number;
  now(): number;
  onSegment(seg: CutSegment): void;
  /** Media skipped (a segment reached `maxBytes` before a keyframe came). */
  onSkip?(reason: string): void;
}

interface Open { pts0: number; start: number; maxPts: number; chunks: Buffer[]; bytes: number }

export class Segmenter {
  readonly #o: SegmenterOptions;
  #pat: Buffer | undefined;
  #pmt: Buffer | undefined;
  #pmtPid = -1;
  #primary: TsStream | undefined;
  #span: { wall: number; pts: number } | undefined;
  #last: number | undefined;
  #frameTicks = 3600;
  #open: Open | undefined;
  /** Offset in the current chunk from which its bytes belong to the open segment (-1: none). */
  #from = -1;

  constructor(o: SegmenterOptions) {
    this.#o = o;
  }

  get recording(): boolean {
    return this.#open !== undefined;
  }

  /** Takes a chunk of whole TS packets (not kept: what a segment needs is copied). */
  push(chunk: Buffer): void {
    this.#from = this.#open ? 0 : -1;
    for (let o = 0; o + TS <= chunk.length; o += TS) {
      if (chunk[o] !== SYNC) continue;
      const pid = tsPid(chunk, o);
      if (pid === 0) this.#onPat(chunk, o);
      else if (pid === this.#pmtPid) this.#onPmt(chunk, o);
      else if (pid === this.#primary?.pid && tsUnitStart(chunk, o)) this.#onPrimary(chunk, o);
      if (this.#open && this.#open.bytes + (o + TS - this.#from) > this.#o.maxBytes) {
        this.#close(chunk, o, undefined);
        this.#o.onSkip?.(`a segment reached ${this.#o.maxBytes} bytes before a keyframe`);
      }
    }
    if (this.#open && this.#from >= 0 && this.#from < chunk.length) this.#append(chunk, this.#from, chunk.length);
    this.#from = -1;
  }

  /** The source is gone: the open segment is finished and the span ends. */
  end(): void {
    if (this.#open) this.#emit(undefined);
    this.#span = undefined;
    this.#last = undefined;
  }

  #onPat(chunk: Buffer, o: number): void {
    const pmts = tsPat(chunk, o);
    if (pmts.length === 0) return;
    this.#pmtPid = pmts[0]!;
    this.#pat = Buffer.from(chunk.subarray(o, o + TS));
  }

  #onPmt(chunk: Buffer, o: number): void {
    const primary = tsPrimary(tsPmt(chunk, o)?.streams ?? []);
    if (!primary) return;
    this.#pmt = Buffer.from(chunk.subarray(o, o + TS));
    this.#primary = primary;
  }

  #onPrimary(chunk: Buffer, o: number): void {
    const raw = (tsPesStamps(chunk, o)?.pts ?? -1);
    if (raw < 0) return;
    const pts = this.#last === undefined ? raw : tsUnwrap(raw, this.#last);
    if (this.#last !== undefined && Math.abs(pts - this.#last) > JUMP_MS * 90) {
      if (this.#open) this.#close(chunk, o, undefined);
      this.end();
      return this.#onPrimary(chunk, o);
    }
    if (this.#last !== undefined && pts > this.#last && pts - this.#last < 90_000) this.#frameTicks = pts - this.#last;
    this.#last = pts;
    const key = this.#primary!.kind !== 'video' || tsRandomAccess(chunk, o);
    const open = this.#open;
    if (open) open.maxPts = Math.max(open.maxPts, pts);
    if (!key) return;
    if (open && pts - open.pts0 >= this.#o.segmentMs * 90) this.#close(chunk, o, pts);
    if (!this.#open) this.#start(o, pts);
  }

  #start(o: number, pts: number): void {
    if (!this.#pat || !this.#pmt) return;
    this.#span ??= { wall: this.#o.now(), pts };
    const start = Math.round(this.#span.wall + (pts - this.#span.pts) / 90);
    this.#open = { pts0: pts, start, maxPts: pts, chunks: [this.#pat, this.#pmt], bytes: 2 * TS };
    this.#from = o;
  }

  /** Finishes the open segment before the packet at `o`; `endPts` is the next keyframe's PTS when known. */
  #close(chunk: Buffer, o: number, endPts: number | undefined): void {
    if (this.#from >= 0 && o > this.#from) this.#append(chunk, this.#from, o);
    this.#from = -1;
    this.#emit(endPts);
  }

  #emit(endPts: number | undefined): void {
    const open = this.#open!;
    this.#open = undefined;
    const span = this.#span!;
    const endAt = endPts ?? open.maxPts + this.#frameTicks;
    const duration = Math.max(0, Math.round(span.wall + (endAt - span.pts) / 90) - open.start);
    this.#o.onSegment({ start: open.start, duration, chunks: open.chunks, bytes: open.bytes });
  }

  #append(chunk: Buffer, from: number, to: number): void {
    const open = this.#open!;
    open.chunks.push(Buffer.from(chunk.subarray(from, to)));
    open.bytes += to - from;
  }
}
