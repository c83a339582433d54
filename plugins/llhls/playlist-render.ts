/*
 * The media playlist text of a rendition (RFC 8216bis 4.4): the low-latency one (parts, preload
 * hint, server control, delta updates) and the plain one for players without LL support, both from
 * the same state, so both name the same segments.
 */
import type { OpenSegment, Part, Rendition, Segment } from './playlist.ts';

export interface RenderOptions {
  /** A delta update (`_HLS_skip=YES` or `v2`): segments older than the skip boundary become `EXT-X-SKIP`. */
  skip?: false | 'YES' | 'v2';
}

/** A decimal with at most 5 digits after the point, no exponent. */
export function decimal(n: number): string {
  return String(Number(n.toFixed(5)));
}

/** Server control values: at or above the RFC's minimums (3 part targets, 6 and 3 target durations). */
export function serverControl(r: Rendition): { partHoldBack: number; canSkipUntil: number; holdBack: number } {
  return { partHoldBack: 3 * r.partTarget, canSkipUntil: 6 * r.targetDuration, holdBack: 3 * r.targetDuration };
}

/**
 * How many of the oldest segments a delta update leaves out: those that end at least
 * CAN-SKIP-UNTIL seconds before the end of the playlist (the skip boundary).
 */
export function skippable(r: Rendition): number {
  const until = serverControl(r).canSkipUntil;
  let after = partsDuration(r.open.parts);
  let n = r.segments.length;
  // walk back from the newest: segment i can go when the segments after it last `until` or more
  while (n > 0 && after < until) after += r.segments[--n]!.duration;
  return after >= until ? n : 0;
}

function partsDuration(parts: Part[]): number {
  let sum = 0;
  for (const p of parts) sum += p.duration;
  return sum;
}

function dateTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** Each part's line, made once (a part never changes once added). */
const partLines = new WeakMap<Part, string>();

function partLine(p: Part): string {
  let line = partLines.get(p);
  if (line === undefined) {
    line = `#EXT-X-PART:DURATION=${decimal(p.duration)},URI="${p.uri}"${p.independent ? ',INDEPENDENT=YES' : ''}`;
    partLines.set(p, line);
  }
  return line;
}

/** Tags before a segment's parts and `EXTINF`: discontinuity, date. */
function segmentHead(out: string[], s: Segment | OpenSegment): void {
  if (s.discontinuity) out.push('#EXT-X-DISCONTINUITY');
  if (s.programDateTime !== undefined) out.push(`#EXT-X-PROGRAM-DATE-TIME:${dateTime(s.programDateTime)}`);
}

/**
 * A complete segment's lines (with its parts or without), made once per segment and form: a
 * segment never changes once complete, and every playlist of the window lists it again.
 */
const segmentTexts = new WeakMap<Segment, { plain?: string; parts?: string }>();

function segmentText(s: Segment, withParts: boolean): string {
  let memo = segmentTexts.get(s);
  if (memo === undefined) segmentTexts.set(s, memo = {});
  let text = withParts ? memo.parts : memo.plain;
  if (text === undefined) {
    const out: string[] = [];
    segmentHead(out, s);
    if (withParts) for (const p of s.parts) out.push(partLine(p));
    out.push(`#EXTINF:${decimal(s.duration)},`, s.uri);
    text = out.join('\n');
    if (withParts) memo.parts = text;
    else memo.plain = text;
  }
  return text;
}

function header(r: Rendition, version: number, lowLatency: boolean): string[] {
  const out = ['#EXTM3U', `#EXT-X-VERSION:${version}`, `#EXT-X-TARGETDURATION:${r.targetDuration}`];
  if (lowLatency) {
    const c = serverControl(r);
    out.push(`#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=${decimal(c.canSkipUntil)},` +
      `PART-HOLD-BACK=${decimal(c.partHoldBack)},HOLD-BACK=${decimal(c.holdBack)}`);
    out.push(`#EXT-X-PART-INF:PART-TARGET=${decimal(r.partTarget)}`);
  }
  out.push(`#EXT-X-MEDIA-SEQUENCE:${r.mediaSequence}`);
  if (r.discontinuitySequence > 0) out.push(`#EXT-X-DISCONTINUITY-SEQUENCE:${r.discontinuitySequence}`);
  return out;
}

/**
 * The low-latency media playlist. Parts are listed for the segments that end within three target
 * durations of the playlist's end (older ones may leave them out, RFC 8216bis 4.4.4.9), and for
 * the segment being written, then the preload hint of the part being written.
 */
export function renderMedia(r: Rendition, opts: RenderOptions = {}): string {
  const skipped = opts.skip ? skippable(r) : 0;
  // EXT-X-SKIP needs version 9 (10 with RECENTLY-REMOVED-DATERANGES); EXT-X-MAP, 6
  const version = skipped > 0 ? (opts.skip === 'v2' ? 10 : 9) : 6;
  const out = header(r, version, true);
  out.push(`#EXT-X-MAP:URI="${r.initUri}"`);
  if (skipped > 0) {
    out.push(`#EXT-X-SKIP:SKIPPED-SEGMENTS=${skipped}${opts.skip === 'v2' ? ',RECENTLY-REMOVED-DATERANGES=""' : ''}`);
  }
  const partWindow = 3 * r.targetDuration;
  let after = partsDuration(r.open.parts);
  const withParts: boolean[] = new Array<boolean>(r.segments.length);
  for (let i = r.segments.length - 1; i >= 0; i--) {
    withParts[i] = after <= partWindow;
    after += r.segments[i]!.duration;
  }
  for (let i = skipped; i < r.segments.length; i++) out.push(segmentText(r.segments[i]!, withParts[i]!));
  if (!r.ended) {
    if (r.open.parts.length > 0) {
      segmentHead(out, r.open);
      for (const p of r.open.parts) out.push(partLine(p));
    }
    if (r.hint !== undefined) out.push(`#EXT-X-PRELOAD-HINT:TYPE=PART,URI="${r.hint}"`);
  } else {
    out.push('#EXT-X-ENDLIST');
  }
  return out.join('\n') + '\n';
}

/** The plain media playlist of the same segments: no parts, no hint, no server control. */
export function renderPlain(r: Rendition): string {
  const out = header(r, 6, false);
  out.push(`#EXT-X-MAP:URI="${r.initUri}"`);
  for (const s of r.segments) out.push(segmentText(s, false));
  if (r.ended) out.push('#EXT-X-ENDLIST');
  return out.join('\n') + '\n';
}
