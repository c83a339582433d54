/*
 * One stream's LL-HLS packager: the stream table's FLV packets in (as an internal reader's
 * batches), the files of one rendition out (init section, parts, segments) and the `Rendition`
 * the playlists are rendered from. Pure but for the clock it is given: no I/O, no timers.
 *
 * Cutting (media time, the FLV timestamps of the track that drives: video when the stream has it,
 * else audio):
 * - a segment ends at the first keyframe (any audio frame, without video) at least the target
 *   duration (less half a frame) after its start; that keyframe starts the next one;
 * - a part ends before the frame that would take it past the part target, so every part is at
 *   most `PART-TARGET` (the last part of a segment may be shorter);
 * - a segment with no keyframe to end it is closed anyway at 3 target durations, or once it holds
 *   half of `maxBytes`: the next one starts mid-GOP (not independent), and memory stays bounded.
 * Audio the muxer cannot package (not AAC, or a header that does not parse) is left out: the
 * stream plays as video only (`audioSkipped` says why); video it cannot package throws.
 * A timestamp that jumps (back more than 1 s, ahead more than 10 s) starts a new timeline: the
 * open segment ends and the next starts at a keyframe after an `EXT-X-DISCONTINUITY`.
 * A sequence header that changes a track starts a new init section (`<epoch>-init<n>.mp4`): the
 * open segment is closed and the segments of the old init leave the playlist, the next one comes
 * after an `EXT-X-DISCONTINUITY`.
 *
 * Names are `<epoch>-<msn>.<part>.m4s` (parts), `<epoch>-<msn>.m4s` (segments): the epoch is the
 * packager's own, so a name never comes back with other bytes (parts and segments are immutable
 * for a CDN). Memory: the segments of the window (at most `maxBytes` in all: the oldest leave
 * first), the parts of the newest `PART_SEGMENTS` segments, and the init.
 */
import type { FlvPacket } from '../../sdk/index.ts';
import { Fmp4Error, Fmp4Muxer, type Fmp4Fragment, type Fmp4Track } from './fmp4.ts';
import { Rendition, type Segment } from './playlist.ts';

export interface PackagerOptions {
  /** Seconds a segment aims at (cut at the first keyframe after it). */
  targetDuration: number;
  /** Seconds a part lasts at most. */
  partTarget: number;
  /** Complete segments kept in the playlist. */
  windowSegments: number;
  /** Bytes of segments kept at most (the oldest leave first; at least one is kept). */
  maxBytes: number;
  /** Prefix of every file name: unique per packager. */
  epoch: string;
  /** Wall clock in ms (`EXT-X-PROGRAM-DATE-TIME`). */
  now(): number;
  /** Told of every file made (with it) and let go (undefined), in order. */
  onFile?(name: string, file: PackagedFile | undefined): void;
}

/** A file of the rendition: its bytes and when it was made. */
export interface PackagedFile {
  data: Buffer;
  mtimeMs: number;
}

/** A frame this far before its track's last one starts a new timeline (ms). */
const JUMP_BACK_MS = 1000;
/** A frame this far after its track's last one (a gap longer than any stall worth freezing on) does too. */
const JUMP_AHEAD_MS = 10_000;

/** A segment without a keyframe to end it is closed at this many target durations. */
const MAX_SEGMENT_TARGETS = 3;

/** Segments whose parts stay fetchable (the playlist lists parts of the last three target durations). */
const PART_SEGMENTS = 4;

/** Packages one stream (see the file's head). */
export class Packager {
  readonly rendition: Rendition;
  /** Bumped on every change of the rendition (a part, a segment, the end): playlist validators. */
  version = 0;
  /** Why the stream's audio is left out (a header the muxer refused), if it is. */
  audioSkipped: string | undefined;
  #files = new Map<string, PackagedFile>();
  #muxer: Fmp4Muxer;
  #opts: PackagerOptions;
  #init = 0;
  #segStart: number | undefined;
  #partStart: number | undefined;
  #last = 0;
  #interval = 0;
  #anchor: { wall: number; media: number } | undefined;
  /**
   * The open segment's bytes so far: its parts back to back in one slab sized from the last
   * segment (a little more), so the segment is usually the slab itself, one allocation and no
   * copy; parts past it go to overflow chunks (`#full`: the used part of each earlier chunk), and
   * only then is the segment copied together at its close. Nothing is copied when a part does
   * not fit: the parts made keep their views.
   */
  #slab: Buffer | undefined;
  #slabUsed = 0;
  #full: Buffer[] = [];
  #fullBytes = 0;
  #lastSegmentBytes = 64 * 1024;
  /** Where the muxer writes a part: the open segment's slab, so the segment is its parts with no copy. */
  #alloc = (size: number): Buffer => {
    const slab = this.#slab;
    if (!slab || this.#slabUsed + size > slab.length) {
      const last = this.#lastSegmentBytes;
      if (slab) {
        this.#full.push(slab.subarray(0, this.#slabUsed));
        this.#fullBytes += this.#slabUsed;
      }
      this.#slab = Buffer.allocUnsafeSlow(Math.max(size, slab ? last >> 2 : last + (last >> 4) + 4096));
      this.#slabUsed = 0;
    }
    const at = this.#slabUsed;
    this.#slabUsed += size;
    return this.#slab!.subarray(at, at + size);
  };
  #bytes = 0;
  /** The lowest media sequence number whose segment may still be held. */
  #segFloor = 0;
  /** Segments closed whose parts may still be held, oldest first. */
  #closed: Segment[] = [];
  #listeners = new Set<() => void>();
  /** The last frame timestamp of video and audio. */
  #lastOf: [number | undefined, number | undefined] = [undefined, undefined];
  #headers: [FlvPacket | undefined, FlvPacket | undefined] = [undefined, undefined];

  constructor(opts: PackagerOptions) {
    this.#opts = opts;
    this.#muxer = new Fmp4Muxer(this.#alloc);
    this.rendition = new Rendition({
      targetDuration: opts.targetDuration, partTarget: opts.partTarget, window: opts.windowSegments, initUri: this.#initName(),
    });
    this.#segFloor = this.rendition.open.msn;
  }

  /** Every file held, by name. */
  entries(): IterableIterator<[string, PackagedFile]> {
    return this.#files.entries();
  }

  /** A file by its name, if it is held. */
  file(name: string): PackagedFile | undefined {
    return this.#files.get(name);
  }

  /** The tracks of the current init section (codecs, picture size), video first. */
  tracks(): readonly Fmp4Track[] {
    return this.#muxer.tracks();
  }

  /** Bytes held (segments, parts, init). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Calls `fn` after every change; returns the removal. */
  onChange(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /** Resolves true once `ready()` holds (checked after each change), false after `ms`. */
  until(ready: () => boolean, ms: number): Promise<boolean> {
    if (ready()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (v: boolean) => { off(); clearTimeout(timer); resolve(v); };
      const off = this.onChange(() => { if (ready()) done(true); });
      const timer = setTimeout(() => done(ready()), ms);
    });
  }

  /** Packages a batch of the stream's packets. Throws an `Fmp4Error` for a header it cannot package. */
  push(batch: readonly FlvPacket[]): void {
    let changed = false;
    for (const p of batch) changed = this.#packet(p) || changed;
    if (changed) this.#changed();
  }

  /** The stream ended: the last samples become the last part and segment; the playlist ends. */
  end(): void {
    if (this.rendition.ended) return;
    const last = this.#muxer.end();
    if (last) this.#part(last);
    if (this.rendition.open.parts.length > 0) this.#closeSegment();
    this.rendition.end();
    this.#changed();
  }

  #packet(p: FlvPacket): boolean {
    const jumped = (p.kind === 'frame' || p.kind === 'keyframe') && this.#jumped(p);
    if (jumped) this.#restart();
    let r;
    try {
      r = this.#muxer.push(p);
    } catch (err) {
      // audio the muxer cannot package (Opus, MP3, a bad config): the stream plays without it
      if (p.type !== 8 || !(err instanceof Fmp4Error)) throw err;
      this.audioSkipped = err.code;
      return false;
    }
    if (r.kind === 'new-init') {
      this.#keepHeader(p);
      this.#newInit(r.last);
      return true;
    }
    if (r.kind === 'header' || r.kind === 'ignored') this.#keepHeader(p);
    if (r.kind === 'header') this.#putInit();
    if (r.kind !== 'sample') return jumped;
    const video = this.#muxer.hasVideo;
    if (p.type !== (video ? 9 : 8)) return jumped;
    return this.#cut(p.timestamp, !video || p.kind === 'keyframe') || jumped;
  }

  /**
   * The frame's timestamp jumps from its track's last: back more than `JUMP_BACK_MS` (a publisher
   * that restarted its clock, the 32-bit wrap after 49 days) or on more than `JUMP_AHEAD_MS`.
   */
  #jumped(p: FlvPacket): boolean {
    const last = this.#lastOf[p.type === 9 ? 0 : 1];
    this.#lastOf[p.type === 9 ? 0 : 1] = p.timestamp;
    return last !== undefined && (p.timestamp < last - JUMP_BACK_MS || p.timestamp > last + JUMP_AHEAD_MS);
  }

  /**
   * A new timeline after a jump: what was taken ends the open segment, a fresh muxer takes the
   * stream's headers again (the same init), and the next segment, from the next keyframe, comes
   * after an `EXT-X-DISCONTINUITY` with its own program date time.
   */
  #restart(): void {
    const last = this.#muxer.end();
    if (last) this.#part(last);
    this.#closeSegment();
    this.#muxer = new Fmp4Muxer(this.#alloc);
    for (const h of this.#headers) if (h) this.#muxer.push(h);
    this.rendition.markDiscontinuity();
    this.#segStart = this.#partStart = undefined;
    this.#anchor = undefined;
    this.#interval = 0;
    // the other track's first frame on the new clock is no jump of its own
    this.#lastOf = [undefined, undefined];
  }

  /** The last sequence header of each track (a restart gives them to the new muxer). */
  #keepHeader(p: FlvPacket): void {
    if (p.kind === 'video-header') this.#headers[0] = p;
    else if (p.kind === 'audio-header') this.#headers[1] = p;
  }

  /** A frame of the driving track came at `t` (ms): ends a part, or a segment, before it when due. */
  #cut(t: number, key: boolean): boolean {
    if (this.#segStart === undefined || this.#partStart === undefined) {
      this.#segStart = this.#partStart = this.#last = t;
      return false;
    }
    if (t > this.#last) this.#interval = t - this.#last;
    this.#last = t;
    const o = this.#opts;
    const age = t - this.#segStart;
    // a publisher that sends no keyframe (or one very rarely), or absurd bytes, still gets its
    // segment closed: what one stream holds stays bounded (the next one starts mid-GOP)
    const overdue = age >= MAX_SEGMENT_TARGETS * o.targetDuration * 1000 || this.#fullBytes + this.#slabUsed >= o.maxBytes / 2;
    if ((key && age >= o.targetDuration * 1000 - this.#interval / 2) || overdue) {
      const f = this.#muxer.flush(t);
      if (f) this.#part(f);
      this.#closeSegment();
      this.#segStart = this.#partStart = t;
      return true;
    }
    if (t - this.#partStart + this.#interval > o.partTarget * 1000 + 0.5 || t - this.#partStart >= o.partTarget * 1000) {
      const f = this.#muxer.flush(t);
      if (f) this.#part(f);
      this.#partStart = t;
      return f !== undefined;
    }
    return false;
  }

  #part(f: Fmp4Fragment): void {
    const r = this.rendition;
    const name = this.#partName(r.open.msn, r.open.parts.length);
    this.#put(name, f.data);
    this.#anchor ??= { wall: this.#opts.now(), media: f.start * 1000 };
    const pdt = Math.round(this.#anchor.wall + f.start * 1000 - this.#anchor.media);
    r.addPart({ duration: f.duration, uri: name, independent: f.independent }, pdt);
    r.setHint(this.#partName(r.open.msn, r.open.parts.length));
  }

  #partName(msn: number, part: number): string {
    return `${this.#opts.epoch}-${msn}.${part}.m4s`;
  }

  #closeSegment(): void {
    const r = this.rendition;
    if (r.open.parts.length === 0) return;
    const name = `${this.#opts.epoch}-${r.open.msn}.m4s`;
    this.#put(name, this.#segmentBytes());
    this.#closed.push(r.closeSegment({ uri: name }));
    r.setHint(this.#partName(r.open.msn, 0));
    this.#forget();
  }

  /**
   * The open segment's bytes, and a new slab for the next: the slab itself when the segment is
   * in it alone and it is nearly full, else an exact copy (the room left would be held as long
   * as the segment; overflow chunks are copied together).
   */
  #segmentBytes(): Buffer {
    const used = this.#slabUsed;
    const slab = this.#slab!;
    const full = this.#full;
    const total = this.#fullBytes + used;
    this.#slab = undefined;
    this.#slabUsed = 0;
    this.#full = [];
    this.#fullBytes = 0;
    this.#lastSegmentBytes = total;
    if (full.length === 0 && slab.length - used <= (used >> 3) + 4096) return slab.subarray(0, used);
    const exact = Buffer.allocUnsafeSlow(total);
    let at = 0;
    for (const b of full) at += b.copy(exact, at);
    slab.copy(exact, at, 0, used);
    return exact;
  }

  /**
   * Segments past the window or the byte bound go, and the parts of all but the newest segments:
   * by their names (the segments from the lowest one held, the parts by the segments closed), not
   * by a scan of every file held.
   */
  #forget(): void {
    const r = this.rendition;
    while (r.segments.length > 1 && this.#bytes > this.#opts.maxBytes) this.#dropSegment(r.dropOldest()!);
    const first = r.mediaSequence;
    for (; this.#segFloor < first; this.#segFloor++) this.#drop(`${this.#opts.epoch}-${this.#segFloor}.m4s`);
    const partsFrom = Math.max(first, r.open.msn - PART_SEGMENTS);
    const closed = this.#closed;
    while (closed.length > 0 && closed[0]!.msn < partsFrom) for (const p of closed.shift()!.parts) this.#drop(p.uri);
  }

  #dropSegment(s: Segment): void {
    this.#drop(s.uri);
    for (const p of s.parts) this.#drop(p.uri);
  }

  #newInit(last: Fmp4Fragment | undefined): void {
    if (last) this.#part(last);
    this.#closeSegment();
    const r = this.rendition;
    while (r.segments.length > 0) this.#dropSegment(r.dropOldest()!);
    this.#drop(this.#initName());
    this.#init++;
    r.initUri = this.#initName();
    r.markDiscontinuity();
    this.#segStart = this.#partStart = undefined;
    this.#putInit();
  }

  #initName(): string {
    return `${this.#opts.epoch}-init${this.#init}.mp4`;
  }

  #putInit(): void {
    const init = this.#muxer.init();
    if (init) this.#put(this.#initName(), init);
  }

  #put(name: string, data: Buffer): void {
    this.#drop(name);
    const file = { data, mtimeMs: this.#opts.now() };
    this.#files.set(name, file);
    this.#bytes += data.length;
    this.#opts.onFile?.(name, file);
  }

  #drop(name: string): void {
    const f = this.#files.get(name);
    if (!f) return;
    this.#files.delete(name);
    this.#bytes -= f.data.length;
    this.#opts.onFile?.(name, undefined);
  }

  /** Lets every file go (the packager is dropped): `onFile` hears of each. */
  clear(): void {
    for (const name of [...this.#files.keys()]) this.#drop(name);
  }

  #changed(): void {
    this.version++;
    for (const fn of [...this.#listeners]) fn();
  }
}
