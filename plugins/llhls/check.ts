/*
 * A checker of media playlists, written from RFC 8216bis's rules (section 4 for the tags, 6.2.5
 * for delta updates): `checkPlaylist(text)` lists the violations (empty when the playlist keeps
 * every rule checked), each with its line and a stable rule id; `checkUpdate(before, after)` checks
 * what must hold between two answers of one playlist (media and discontinuity sequences). Made to
 * run on every playlist answer of a test suite: one pass over the lines, then a few over segments.
 */
import { attributes, parsePlaylist, type ParsedPart, type ParsedPlaylist, type Violation } from './check-parse.ts';

export type { Violation } from './check-parse.ts';

export interface CheckOptions {
  /** Seconds the parts of a segment may sum to off its `EXTINF` (default 0.05). */
  partSumTolerance?: number;
  /** Seconds a program date time may be off the previous one plus its segment (default 0.25). */
  dateTolerance?: number;
}

/** Printed decimals: a part may exceed PART-TARGET by this much from rounding alone. */
const PRINT_EPSILON = 0.0005;

function once(p: ParsedPlaylist, name: string, rule: string, out: Violation[]): string | undefined {
  const list = p.tags.get(name);
  if (!list) return undefined;
  if (list.length > 1) out.push({ line: list[1]!.line, rule, message: `${name} appears more than once` });
  const first = list[0]!;
  if (name !== 'EXT-X-ENDLIST' && name !== 'EXT-X-MAP' && p.firstMediaLine > 0 && first.line > p.firstMediaLine) {
    out.push({ line: first.line, rule, message: `${name} must come before the first segment (line ${p.firstMediaLine})` });
  }
  return first.value;
}

function integerTag(p: ParsedPlaylist, name: string, rule: string, out: Violation[]): number | undefined {
  const v = once(p, name, rule, out);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) {
    out.push({ line: p.tags.get(name)![0]!.line, rule, message: `${name} must be a decimal integer, not ${JSON.stringify(v)}` });
    return undefined;
  }
  return Number(v);
}

function checkTarget(p: ParsedPlaylist, out: Violation[]): number | undefined {
  const target = integerTag(p, 'EXT-X-TARGETDURATION', 'target-duration', out);
  if (target === undefined) {
    if (!p.tags.has('EXT-X-TARGETDURATION')) out.push({ line: 1, rule: 'target-duration', message: 'EXT-X-TARGETDURATION is missing' });
    return undefined;
  }
  for (const s of p.segments) {
    const r = Math.round(s.duration);
    if (r > target) out.push({ line: s.line, rule: 'target-duration', message: `EXTINF ${s.duration} rounds to ${r}, above EXT-X-TARGETDURATION ${target}` });
  }
  return target;
}

function checkVersion(p: ParsedPlaylist, out: Violation[]): void {
  const declared = integerTag(p, 'EXT-X-VERSION', 'version', out) ?? 1;
  let need = 1;
  let why = '';
  const want = (v: number, tag: string): void => { if (v > need) { need = v; why = tag; } };
  if (p.segments.some((s) => !Number.isInteger(s.duration))) want(3, 'a decimal EXTINF');
  if (p.tags.has('EXT-X-MAP')) want(6, 'EXT-X-MAP');
  const skip = p.tags.get('EXT-X-SKIP')?.[0];
  if (skip) want(skip.value.includes('RECENTLY-REMOVED-DATERANGES') ? 10 : 9, 'EXT-X-SKIP');
  if (declared < need) {
    const line = p.tags.get('EXT-X-VERSION')?.[0]?.line ?? 1;
    out.push({ line, rule: 'version', message: `${why} needs EXT-X-VERSION ${need} or higher, found ${declared}` });
  }
}

/** Parts: within PART-TARGET, at least 85% of it unless independent or the last of their segment, summing to the segment. */
function checkParts(p: ParsedPlaylist, partTarget: number, tol: number, out: Violation[]): void {
  const limit = partTarget + PRINT_EPSILON;
  const each = (parts: ParsedPart[]): void => {
    for (const [i, part] of parts.entries()) {
      if (part.duration > limit) {
        out.push({ line: part.line, rule: 'part-target', message: `EXT-X-PART DURATION ${part.duration} is above PART-TARGET ${partTarget}` });
      }
      const last = i === parts.length - 1;
      if (!part.independent && !last && part.duration < 0.85 * partTarget - PRINT_EPSILON) {
        out.push({ line: part.line, rule: 'part-min', message: `EXT-X-PART DURATION ${part.duration} is under 85% of PART-TARGET ${partTarget} and is neither INDEPENDENT nor the last of its segment` });
      }
    }
  };
  for (const s of p.segments) {
    if (s.parts.length === 0) continue;
    each(s.parts);
    let sum = 0;
    for (const part of s.parts) sum += part.duration;
    if (Math.abs(sum - s.duration) > tol) {
      out.push({ line: s.line, rule: 'part-sum', message: `the parts of this segment sum to ${Number(sum.toFixed(5))} s, its EXTINF says ${s.duration}` });
    }
  }
  each(p.openParts);
}

function decimalAttr(a: Map<string, string>, name: string): number | undefined {
  const v = a.get(name);
  return v === undefined || !/^\d+(\.\d+)?$/.test(v) ? undefined : Number(v);
}

function checkServerControl(p: ParsedPlaylist, target: number | undefined, partTarget: number | undefined, out: Violation[]): number | undefined {
  const raw = once(p, 'EXT-X-SERVER-CONTROL', 'server-control', out);
  const line = p.tags.get('EXT-X-SERVER-CONTROL')?.[0]?.line ?? 1;
  if (raw === undefined) {
    if (partTarget !== undefined) out.push({ line: 1, rule: 'server-control', message: 'a playlist with EXT-X-PART-INF needs EXT-X-SERVER-CONTROL with PART-HOLD-BACK' });
    return undefined;
  }
  const a = attributes(raw) ?? new Map<string, string>();
  const at = (name: string, min: number | undefined, what: string): number | undefined => {
    const v = decimalAttr(a, name);
    if (a.has(name) && v === undefined) out.push({ line, rule: 'server-control', message: `${name} must be a decimal, not ${JSON.stringify(a.get(name))}` });
    else if (v !== undefined && min !== undefined && v < min - PRINT_EPSILON) out.push({ line, rule: 'server-control', message: `${name}=${v} is under ${what} (${Number(min.toFixed(5))})` });
    return v;
  };
  const canSkip = at('CAN-SKIP-UNTIL', target === undefined ? undefined : 6 * target, 'six target durations');
  at('HOLD-BACK', target === undefined ? undefined : 3 * target, 'three target durations');
  const phb = at('PART-HOLD-BACK', partTarget === undefined ? undefined : 2 * partTarget, 'twice the part target');
  if (partTarget !== undefined) {
    if (phb === undefined && !a.has('PART-HOLD-BACK')) out.push({ line, rule: 'server-control', message: 'PART-HOLD-BACK is required with EXT-X-PART-INF' });
    if (a.get('CAN-BLOCK-RELOAD') !== 'YES') out.push({ line, rule: 'server-control', message: 'a low-latency playlist needs CAN-BLOCK-RELOAD=YES' });
  }
  return canSkip;
}

function checkHints(p: ParsedPlaylist, out: Violation[]): void {
  const seen = new Set<string>();
  for (const h of p.hints) {
    const type = h.attrs.get('TYPE');
    if (type !== 'PART' && type !== 'MAP') out.push({ line: h.line, rule: 'preload-hint', message: `EXT-X-PRELOAD-HINT TYPE must be PART or MAP, not ${JSON.stringify(type)}` });
    if (!h.attrs.get('URI')) out.push({ line: h.line, rule: 'preload-hint', message: 'EXT-X-PRELOAD-HINT needs a URI' });
    if (type && seen.has(type)) out.push({ line: h.line, rule: 'preload-hint', message: `a second EXT-X-PRELOAD-HINT of TYPE=${type}` });
    if (type) seen.add(type);
    if (h.line < p.lastMediaLine) out.push({ line: h.line, rule: 'preload-hint', message: `EXT-X-PRELOAD-HINT must come after the last part or segment (line ${p.lastMediaLine})` });
  }
}

function checkSkip(p: ParsedPlaylist, canSkipUntil: number | undefined, out: Violation[]): void {
  const raw = once(p, 'EXT-X-SKIP', 'skip', out);
  if (raw === undefined) return;
  const line = p.tags.get('EXT-X-SKIP')![0]!.line;
  const skipped = attributes(raw)?.get('SKIPPED-SEGMENTS');
  if (skipped === undefined || !/^\d+$/.test(skipped)) out.push({ line, rule: 'skip', message: 'EXT-X-SKIP needs SKIPPED-SEGMENTS, a decimal integer' });
  if (canSkipUntil === undefined) {
    out.push({ line, rule: 'skip', message: 'EXT-X-SKIP without CAN-SKIP-UNTIL in EXT-X-SERVER-CONTROL' });
    return;
  }
  let kept = 0;
  for (const s of p.segments) kept += s.duration;
  for (const part of p.openParts) kept += part.duration;
  if (kept < canSkipUntil - PRINT_EPSILON) {
    out.push({ line, rule: 'skip', message: `the segments after the skipped ones last ${Number(kept.toFixed(5))} s, under CAN-SKIP-UNTIL ${canSkipUntil}: a skipped segment was within the skip boundary` });
  }
}

/** Rendition reports: a URI, LAST-MSN a decimal integer, LAST-PART one when present; one per URI. */
function checkReports(p: ParsedPlaylist, out: Violation[]): void {
  const seen = new Set<string>();
  for (const tag of p.tags.get('EXT-X-RENDITION-REPORT') ?? []) {
    const a = attributes(tag.value) ?? new Map<string, string>();
    const bad = (message: string) => out.push({ line: tag.line, rule: 'rendition-report', message });
    const uri = a.get('URI');
    if (!uri) bad('EXT-X-RENDITION-REPORT needs a URI');
    else if (seen.has(uri)) bad(`a second EXT-X-RENDITION-REPORT of ${uri}`);
    else seen.add(uri);
    if (!/^\d+$/.test(a.get('LAST-MSN') ?? '')) bad('EXT-X-RENDITION-REPORT needs LAST-MSN, a decimal integer');
    if (a.has('LAST-PART') && !/^\d+$/.test(a.get('LAST-PART')!)) bad('LAST-PART must be a decimal integer');
  }
}

function checkDates(p: ParsedPlaylist, tol: number, out: Violation[]): void {
  const all = p.openParts.length > 0 ? [...p.segments, { duration: 0, pdt: p.openPdt, discontinuity: p.openDiscontinuity }] : p.segments;
  for (let i = 1; i < all.length; i++) {
    const prev = all[i - 1]!;
    const s = all[i]!;
    if (!s.pdt || !prev.pdt || s.discontinuity) continue;
    const expected = prev.pdt.ms + prev.duration * 1000;
    if (Math.abs(s.pdt.ms - expected) > tol * 1000) {
      out.push({ line: s.pdt.line, rule: 'program-date-time', message: `EXT-X-PROGRAM-DATE-TIME is ${((s.pdt.ms - prev.pdt.ms) / 1000).toFixed(3)} s after the previous one, whose segment lasts ${prev.duration} s` });
    }
  }
}

/** The violations of one media playlist, in line order; empty when valid. */
export function checkPlaylist(text: string, opts: CheckOptions = {}): Violation[] {
  const p = parsePlaylist(text);
  const out = p.violations;
  if (p.first !== '#EXTM3U') out.push({ line: 1, rule: 'extm3u', message: 'the first line must be #EXTM3U' });
  checkVersion(p, out);
  const target = checkTarget(p, out);
  integerTag(p, 'EXT-X-MEDIA-SEQUENCE', 'media-sequence', out);
  integerTag(p, 'EXT-X-DISCONTINUITY-SEQUENCE', 'discontinuity-sequence', out);
  const partInf = once(p, 'EXT-X-PART-INF', 'part-target', out);
  let partTarget: number | undefined;
  if (partInf !== undefined) {
    partTarget = decimalAttr(attributes(partInf) ?? new Map(), 'PART-TARGET');
    if (!(partTarget! > 0)) out.push({ line: p.tags.get('EXT-X-PART-INF')![0]!.line, rule: 'part-target', message: 'EXT-X-PART-INF needs PART-TARGET, a positive decimal' });
  } else if (p.segments.some((s) => s.parts.length > 0) || p.openParts.length > 0) {
    out.push({ line: p.firstMediaLine, rule: 'part-target', message: 'EXT-X-PART without EXT-X-PART-INF' });
  }
  if (partTarget !== undefined && partTarget > 0) checkParts(p, partTarget, opts.partSumTolerance ?? 0.05, out);
  const canSkipUntil = checkServerControl(p, target, partTarget, out);
  checkHints(p, out);
  checkSkip(p, canSkipUntil, out);
  checkDates(p, opts.dateTolerance ?? 0.25, out);
  checkReports(p, out);
  return out.sort((a, b) => a.line - b.line);
}

export { checkUpdate } from './check-update.ts';
