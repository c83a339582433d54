/*
 * Blocking playlist reload (RFC 8216bis 6.2.5.2) as a pure decision: given the query's `_HLS_msn`,
 * `_HLS_part` and `_HLS_skip` and a rendition's state, answer now, wait for a segment or part, or
 * refuse with 400. The caller holds a waiting request, asks `isReady` after every part and segment,
 * and answers 503 (`llhlsErrors.reloadTimeout`) after `timeoutMs`.
 */
import type { ApiError } from '../../sdk/index.ts';
import { llhlsErrors } from './errors.ts';

/** The raw query values (absent = undefined). */
export interface ReloadAsk {
  msn?: string;
  part?: string;
  skip?: string;
}

export type Skip = false | 'YES' | 'v2';

export type ReloadDecision =
  | { kind: 'now'; skip: Skip }
  | { kind: 'wait'; msn: number; part: number | undefined; skip: Skip; timeoutMs: number }
  | { kind: 'refuse'; error: ApiError };

/**
 * What a reload decision reads of a rendition: a `Rendition` (on main) and the state a serving
 * thread's view is fed (`view-state.ts`) both are one.
 */
export interface ReloadView {
  readonly ended: boolean;
  readonly partTarget: number;
  readonly targetDuration: number;
  /** Media sequence number of the last complete segment. */
  readonly lastMsn: number;
  /** Media sequence number of the segment being written, and its parts so far. */
  readonly openMsn: number;
  readonly openParts: number;
  /** The newest part in the playlist as (msn, index), or undefined when there is none. */
  readonly newestPart: { msn: number; index: number } | undefined;
}

const INTEGER = /^\d{1,15}$/;

/**
 * The Advance Part Limit: how many parts past the last one an ask may be before it is refused
 * (three divided by the part target when that is under one second, three otherwise).
 */
export function advancePartLimit(partTarget: number): number {
  return partTarget < 1 ? 3 / partTarget : 3;
}

/** The playlist holds segment `msn` (complete) or, with `part`, that part of it or anything later. */
export function isReady(r: ReloadView, msn: number, part?: number): boolean {
  if (r.ended || r.lastMsn >= msn) return true;
  if (part === undefined) return false;
  const newest = r.newestPart;
  return newest !== undefined && (newest.msn > msn || (newest.msn === msn && newest.index >= part));
}

/** Parts between the newest one and the asked one (1 = the next part). */
function partsAhead(r: ReloadView, msn: number, part: number): number {
  const done = r.openParts;
  if (msn === r.openMsn) return part - (done - 1);
  // the segment after the one being written: the rest of this one comes first
  const perSegment = Math.ceil(r.targetDuration / r.partTarget - 1e-9);
  return Math.max(0, perSegment - done) + part + 1;
}

function parseSkip(value: string | undefined): Skip | ApiError {
  if (value === undefined) return false;
  if (value === 'YES' || value === 'v2') return value;
  return llhlsErrors.badSkip(value);
}

/** Decides what to do with a playlist request carrying the blocking-reload directives. */
export function decideReload(r: ReloadView, ask: ReloadAsk): ReloadDecision {
  const skip = parseSkip(ask.skip);
  if (typeof skip !== 'string' && skip !== false) return { kind: 'refuse', error: skip };
  if (ask.msn === undefined) {
    return ask.part === undefined ? { kind: 'now', skip } : { kind: 'refuse', error: llhlsErrors.partWithoutMsn() };
  }
  if (!INTEGER.test(ask.msn)) return { kind: 'refuse', error: llhlsErrors.malformed('_HLS_msn', ask.msn) };
  if (ask.part !== undefined && !INTEGER.test(ask.part)) {
    return { kind: 'refuse', error: llhlsErrors.malformed('_HLS_part', ask.part) };
  }
  const msn = Number(ask.msn);
  const part = ask.part === undefined ? undefined : Number(ask.part);
  if (isReady(r, msn, part)) return { kind: 'now', skip };
  if (msn > r.lastMsn + 2) {
    return { kind: 'refuse', error: llhlsErrors.tooFarAhead(`_HLS_msn ${msn} is more than 2 past the last segment ${r.lastMsn}`) };
  }
  if (part !== undefined) {
    const limit = advancePartLimit(r.partTarget);
    const ahead = partsAhead(r, msn, part);
    if (ahead > limit) {
      return { kind: 'refuse', error: llhlsErrors.tooFarAhead(`_HLS_part ${part} of segment ${msn} is ${ahead} parts past the last one (limit ${decimalLimit(limit)})`) };
    }
  }
  return { kind: 'wait', msn, part, skip, timeoutMs: Math.round(3 * r.targetDuration * 1000) };
}

function decimalLimit(n: number): string {
  return String(Number(n.toFixed(3)));
}
