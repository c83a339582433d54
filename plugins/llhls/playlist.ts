/*
 * The state of one stream's rendition as an LL-HLS media playlist shows it (RFC 8216bis): the
 * complete segments of the window, each with its parts, the segment being written (its parts so
 * far) and the part being written (the preload hint). Pure: no clock, no I/O; the packager tells
 * it what it cut. The text is rendered by `playlist-render.ts`, blocking reloads are decided by
 * `playlist-reload.ts`.
 */

/** A partial segment (`EXT-X-PART`). */
export interface Part {
  /** Seconds. */
  duration: number;
  uri: string;
  /** It starts with a keyframe (`INDEPENDENT=YES`). */
  independent: boolean;
}

/** A complete media segment. */
export interface Segment {
  /** Media sequence number. */
  msn: number;
  /** Seconds (`EXTINF`). */
  duration: number;
  uri: string;
  /** Wall clock of its first sample, ms since the epoch (`EXT-X-PROGRAM-DATE-TIME`). */
  programDateTime: number | undefined;
  /** It starts with a keyframe. */
  independent: boolean;
  /** An `EXT-X-DISCONTINUITY` comes before it. */
  discontinuity: boolean;
  parts: Part[];
}

/** The segment being written: its parts so far. */
export interface OpenSegment {
  msn: number;
  programDateTime: number | undefined;
  discontinuity: boolean;
  parts: Part[];
}

export interface RenditionOptions {
  /** Seconds a segment aims at (the packager cuts at the first keyframe after it). */
  targetDuration: number;
  /** Seconds a part aims at, at most (`PART-TARGET`). */
  partTarget: number;
  /** Complete segments kept (at least 1). */
  window: number;
  /** URI of the initialization section (`EXT-X-MAP`). */
  initUri: string;
  /** Media sequence number of the first segment (default 0). */
  firstMsn?: number;
}

/** The RFC's rounding of a duration for `EXT-X-TARGETDURATION`: to the nearest integer. */
export function roundedDuration(seconds: number): number {
  return Math.round(seconds);
}

/** One rendition's segments, parts and hint. */
export class Rendition {
  readonly partTarget: number;
  readonly window: number;
  /** URI of the initialization section (a new one after a track changed). */
  initUri: string;
  /** Segments of the window, oldest first. */
  readonly segments: Segment[] = [];
  /** The segment being written. */
  open: OpenSegment;
  /** URI of the part being written (`EXT-X-PRELOAD-HINT:TYPE=PART`), if any. */
  hint: string | undefined;
  /** `EXT-X-DISCONTINUITY-SEQUENCE`: discontinuities that left the window. */
  discontinuitySequence = 0;
  /** The stream ended (`EXT-X-ENDLIST`). */
  ended = false;
  #target: number;

  constructor(opts: RenditionOptions) {
    if (!(opts.partTarget > 0) || !(opts.targetDuration >= opts.partTarget)) {
      throw new RangeError('need 0 < partTarget <= targetDuration');
    }
    this.partTarget = opts.partTarget;
    this.window = Math.max(1, Math.floor(opts.window));
    this.initUri = opts.initUri;
    this.#target = Math.max(1, roundedDuration(opts.targetDuration));
    this.open = { msn: opts.firstMsn ?? 0, programDateTime: undefined, discontinuity: false, parts: [] };
  }

  /**
   * `EXT-X-TARGETDURATION`: the configured target rounded, raised to the rounded duration of the
   * longest segment seen (never lowered again, so it changes at most when a segment outgrows it).
   */
  get targetDuration(): number {
    return this.#target;
  }

  /** Media sequence number of the first segment shown. */
  get mediaSequence(): number {
    return this.segments[0]?.msn ?? this.open.msn;
  }

  /** Media sequence number of the last complete segment (one less than the first when none). */
  get lastMsn(): number {
    return this.open.msn - 1;
  }

  /** Media sequence number of the segment being written (`ReloadView`). */
  get openMsn(): number {
    return this.open.msn;
  }

  /** Parts of the segment being written so far (`ReloadView`). */
  get openParts(): number {
    return this.open.parts.length;
  }

  /** The newest part in the playlist as (msn, index), or undefined when there is none (`ReloadView`). */
  get newestPart(): { msn: number; index: number } | undefined {
    if (this.open.parts.length > 0) return { msn: this.open.msn, index: this.open.parts.length - 1 };
    const last = this.segments.at(-1);
    return last && last.parts.length > 0 ? { msn: last.msn, index: last.parts.length - 1 } : undefined;
  }

  /** A part of the segment being written is complete. `programDateTime` counts for its first part. */
  addPart(part: Part, programDateTime?: number): void {
    if (this.open.parts.length === 0 && programDateTime !== undefined) this.open.programDateTime = programDateTime;
    this.open.parts.push({ ...part });
  }

  /** The next segment follows a discontinuity (a new publisher, a timestamp jump). */
  markDiscontinuity(): void {
    this.open.discontinuity = true;
  }

  /** Sets or clears the part being written. */
  setHint(uri: string | undefined): void {
    this.hint = uri;
  }

  /**
   * The segment being written is complete: it joins the window (the oldest leaves past the window)
   * and a new one opens. Its duration is the sum of its parts unless given.
   */
  closeSegment(seg: { uri: string; duration?: number; programDateTime?: number; independent?: boolean }): Segment {
    const { open } = this;
    const duration = seg.duration ?? open.parts.reduce((sum, p) => sum + p.duration, 0);
    const done: Segment = {
      msn: open.msn, duration, uri: seg.uri,
      programDateTime: seg.programDateTime ?? open.programDateTime,
      independent: seg.independent ?? open.parts[0]?.independent ?? false,
      discontinuity: open.discontinuity, parts: open.parts,
    };
    this.segments.push(done);
    this.#target = Math.max(this.#target, roundedDuration(duration));
    while (this.segments.length > this.window) this.dropOldest();
    this.open = { msn: open.msn + 1, programDateTime: undefined, discontinuity: false, parts: [] };
    return done;
  }

  /** The oldest segment leaves the window (a discontinuity before it is counted); undefined when none. */
  dropOldest(): Segment | undefined {
    const gone = this.segments.shift();
    if (gone?.discontinuity) this.discontinuitySequence++;
    return gone;
  }

  /** The stream ended: no more parts, no hint; a started segment is dropped. */
  end(): void {
    this.ended = true;
    this.hint = undefined;
    this.open = { ...this.open, parts: [] };
  }
}
