// What one input stream (a source run or the error-frame clip) carries: its PAT and PMT (kept as
// packets so they can be replayed to a consumer joining late or at a splice), the elementary PIDs with
// their kind, and which PID is the "primary" one whose keyframes are the splice points.
import { isRandomAccess, isUnitStart, payloadOffset, pidOf } from './ts-packet.ts';

export type EsKind = 'video' | 'audio' | 'other';

export interface EsInfo { pid: number; streamType: number; kind: EsKind }

const VIDEO_TYPES = new Set([0x01, 0x02, 0x10, 0x1b, 0x24, 0x42, 0xd1, 0xea]);
const AUDIO_TYPES = new Set([0x03, 0x04, 0x0f, 0x11, 0x81, 0x82, 0x87]);

function kindOf(streamType: number): EsKind {
  if (VIDEO_TYPES.has(streamType)) return 'video';
  if (AUDIO_TYPES.has(streamType)) return 'audio';
  return 'other';
}

/** The section bytes of a PSI packet (after the pointer field), or null if it starts no section. */
function sectionOf(p: Buffer): Buffer | null {
  if (!isUnitStart(p)) return null;
  const o = payloadOffset(p);
  if (o >= 188) return null;
  const start = o + 1 + p[o]!;
  if (start + 3 > 188) return null;
  const len = ((p[start + 1]! & 0x0f) << 8) | p[start + 2]!;
  return p.subarray(start, Math.min(188, start + 3 + len));
}

/** PMT PIDs listed in a PAT section (program 0, the NIT, left out). */
export function parsePat(p: Buffer): number[] {
  const s = sectionOf(p);
  if (!s || s[0] !== 0x00) return [];
  const pids: number[] = [];
  for (let i = 8; i + 4 <= s.length - 4; i += 4) {
    const program = (s[i]! << 8) | s[i + 1]!;
    if (program !== 0) pids.push(((s[i + 2]! & 0x1f) << 8) | s[i + 3]!);
  }
  return pids;
}

/** The elementary streams of a PMT section, in order; null if the packet holds no PMT. */
export function parsePmt(p: Buffer): { pcrPid: number; streams: EsInfo[] } | null {
  const s = sectionOf(p);
  if (!s || s[0] !== 0x02 || s.length < 16) return null;
  const pcrPid = ((s[8]! & 0x1f) << 8) | s[9]!;
  const infoLen = ((s[10]! & 0x0f) << 8) | s[11]!;
  const streams: EsInfo[] = [];
  for (let i = 12 + infoLen; i + 5 <= s.length - 4;) {
    const streamType = s[i]!;
    const pid = ((s[i + 1]! & 0x1f) << 8) | s[i + 2]!;
    const esLen = ((s[i + 3]! & 0x0f) << 8) | s[i + 4]!;
    streams.push({ pid, streamType, kind: kindOf(streamType) });
    i += 5 + esLen;
  }
  return { pcrPid, streams };
}

export class TsInput {
  /** The last PAT and PMT packets seen, replayed at splices and to joining consumers. */
  pat: Buffer | undefined;
  pmt: Buffer | undefined;
  streams: EsInfo[] = [];
  #pmtPid = -1;
  #kinds = new Map<number, EsKind>();
  /** The PID whose keyframes are splice points: the first video stream, else the first stream. */
  primary = -1;

  /** Learns from PSI packets; returns true for PAT/PMT packets (they are not media). */
  observeTables(p: Buffer): boolean {
    const pid = pidOf(p);
    if (pid === 0) {
      const pmts = parsePat(p);
      if (pmts.length > 0) { this.#pmtPid = pmts[0]!; this.pat = Buffer.from(p); }
      return true;
    }
    if (pid !== this.#pmtPid) return false;
    const pmt = parsePmt(p);
    if (pmt) {
      this.pmt = Buffer.from(p);
      this.streams = pmt.streams;
      this.#kinds = new Map(pmt.streams.map((s) => [s.pid, s.kind]));
      this.primary = (pmt.streams.find((s) => s.kind === 'video') ?? pmt.streams[0])?.pid ?? -1;
    }
    return true;
  }

  get pmtPid(): number {
    return this.#pmtPid;
  }

  get ready(): boolean {
    return this.primary >= 0 && this.pat !== undefined;
  }

  kindOf(pid: number): EsKind | undefined {
    return this.#kinds.get(pid);
  }

  /** A packet starting a keyframe of the primary stream (any PES start when the primary is audio). */
  isKeyframe(p: Buffer): boolean {
    if (pidOf(p) !== this.primary || !isUnitStart(p)) return false;
    return this.#kinds.get(this.primary) !== 'video' || isRandomAccess(p);
  }

  /** A short description of the PIDs and stream types, to tell whether two inputs' PMTs agree. */
  layout(): string {
    return this.streams.map((s) => `${s.pid}:${s.streamType}`).join(',');
  }
}
