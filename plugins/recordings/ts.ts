// The little of MPEG-TS (ISO/IEC 13818-1) the recorder needs, on packets at an offset of a chunk:
// the PID, the unit start, the random access flag, the PTS of a PES start, the PMT PIDs of a PAT
// and the elementary streams of a PMT (single-packet sections, as ffmpeg and the core's remux write).
// The playout relay has its own copy of these (plugins/playout/relay/ts-packet.ts, ts-input.ts):
// both could move to the SDK.

export const TS = 188;
export const SYNC = 0x47;
/** PTS/DTS are 33-bit counters of a 90 kHz clock. */
export const WRAP = 2 ** 33;

const VIDEO_TYPES = new Set([0x01, 0x02, 0x10, 0x1b, 0x24, 0x42, 0xd1, 0xea]);

export function pidAt(b: Buffer, o: number): number {
  return ((b[o + 1]! & 0x1f) << 8) | b[o + 2]!;
}

export function unitStartAt(b: Buffer, o: number): boolean {
  return (b[o + 1]! & 0x40) !== 0;
}

function afLength(b: Buffer, o: number): number {
  return (b[o + 3]! & 0x20) !== 0 ? b[o + 4]! : -1;
}

/** Offset of the payload of the packet at `o` (absolute); `o + 188` when it has none. */
function payloadAt(b: Buffer, o: number): number {
  if ((b[o + 3]! & 0x10) === 0) return o + TS;
  const af = afLength(b, o);
  return Math.min(o + TS, af < 0 ? o + 4 : o + 5 + af);
}

/** random_access_indicator: set by muxers on the first packet of a keyframe. */
export function randomAccessAt(b: Buffer, o: number): boolean {
  return afLength(b, o) > 0 && (b[o + 5]! & 0x40) !== 0;
}

/** The PTS of a packet starting a PES with one, else -1. */
export function ptsAt(b: Buffer, o: number): number {
  if (!unitStartAt(b, o)) return -1;
  const p = payloadAt(b, o);
  if (p + 14 > o + TS || b[p] !== 0 || b[p + 1] !== 0 || b[p + 2] !== 1) return -1;
  if ((b[p + 7]! & 0x80) === 0) return -1;
  const s = p + 9;
  return ((b[s]! >> 1) & 0x07) * 2 ** 30 + ((b[s + 1]! << 22) | ((b[s + 2]! >> 1) << 15) | (b[s + 3]! << 7) | (b[s + 4]! >> 1));
}

/** Start and end (CRC excluded) of the section in the packet at `o`. */
function sectionAt(b: Buffer, o: number): { at: number; end: number } | undefined {
  if (!unitStartAt(b, o)) return undefined;
  let at = payloadAt(b, o);
  if (at >= o + TS) return undefined;
  at += 1 + b[at]!;
  if (at + 3 > o + TS) return undefined;
  const len = ((b[at + 1]! & 0x0f) << 8) | b[at + 2]!;
  return { at, end: Math.min(at + 3 + len - 4, o + TS) };
}

/** The PMT PIDs of a PAT packet (program 0, the network PID, left out). */
export function patAt(b: Buffer, o: number): number[] {
  const s = sectionAt(b, o);
  if (!s || b[s.at] !== 0x00) return [];
  const pids: number[] = [];
  for (let i = s.at + 8; i + 4 <= s.end; i += 4) {
    if (((b[i]! << 8) | b[i + 1]!) !== 0) pids.push(((b[i + 2]! & 0x1f) << 8) | b[i + 3]!);
  }
  return pids;
}

/** The primary stream of a PMT packet: its first video stream, else its first stream; undefined when no PMT or no stream. */
export function primaryOfPmt(b: Buffer, o: number): { pid: number; video: boolean } | undefined {
  const s = sectionAt(b, o);
  if (!s || b[s.at] !== 0x02 || s.at + 12 > s.end) return undefined;
  const infoLen = ((b[s.at + 10]! & 0x0f) << 8) | b[s.at + 11]!;
  let first = -1;
  for (let i = s.at + 12 + infoLen; i + 5 <= s.end;) {
    const pid = ((b[i + 1]! & 0x1f) << 8) | b[i + 2]!;
    if (VIDEO_TYPES.has(b[i]!)) return { pid, video: true };
    if (first < 0) first = pid;
    i += 5 + (((b[i + 3]! & 0x0f) << 8) | b[i + 4]!);
  }
  return first < 0 ? undefined : { pid: first, video: false };
}

/** The stream types a PMT packet lists. */
export function streamTypesOfPmt(b: Buffer, o: number): number[] {
  const s = sectionAt(b, o);
  if (!s || b[s.at] !== 0x02 || s.at + 12 > s.end) return [];
  const types: number[] = [];
  for (let i = s.at + 12 + (((b[s.at + 10]! & 0x0f) << 8) | b[s.at + 11]!); i + 5 <= s.end;) {
    types.push(b[i]!);
    i += 5 + (((b[i + 3]! & 0x0f) << 8) | b[i + 4]!);
  }
  return types;
}

/** `pts` unwrapped next to `near` (both 90 kHz): the value within half a wrap of it. */
export function unwrap(pts: number, near: number): number {
  let v = pts + Math.round((near - pts) / WRAP) * WRAP;
  if (v - near > WRAP / 2) v -= WRAP;
  return v;
}
