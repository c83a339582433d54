/*
 * The little of MPEG-TS (ISO/IEC 13818-1) that readers of a stream need, pure functions over a
 * packet at offset `o` of a Buffer (0 for a Buffer of one packet): the header fields, the random
 * access flag, the PTS/DTS of a PES start, the PMT PIDs of a PAT and the streams of a PMT
 * (single-packet sections, as ffmpeg and the core's remux write them). Used by the core's stream
 * table, the recorder and the playout relay alike.
 */

/**
 * Bytes of one TS packet.
 *
 * @example
 * for (let o = 0; o + TS_PACKET <= chunk.length; o += TS_PACKET) read(chunk, o);
 */
export const TS_PACKET = 188;
/**
 * The sync byte every packet starts with.
 *
 * @example
 * if (chunk[o] !== TS_SYNC) continue;
 */
export const TS_SYNC = 0x47;
/**
 * PTS, DTS and the PCR base are 33-bit counters of a 90 kHz clock: they wrap at 2^33.
 *
 * @example
 * const ahead = (pts - last + TS_WRAP) % TS_WRAP;
 */
export const TS_WRAP = 2 ** 33;

/**
 * PMT stream types the remux reads and writes: H.264, AAC in ADTS, MPEG-1 and MPEG-2 audio.
 *
 * @example
 * if (s.streamType === TS_ST.h264) follow(s.pid);
 */
export const TS_ST = Object.freeze({ h264: 0x1b, aacAdts: 0x0f, mpeg1Audio: 0x03, mpeg2Audio: 0x04 });

const CRC_TABLE = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  let c = i << 24;
  for (let k = 0; k < 8; k++) c = (c & 0x80000000) !== 0 ? (c << 1) ^ 0x04c11db7 : c << 1;
  CRC_TABLE[i] = c >>> 0;
}

/**
 * CRC-32/MPEG-2 of `buf[start, end)`: a section's CRC over its bytes with the CRC included is 0.
 *
 * @example
 * const valid = tsCrc32(b, sectionStart, sectionEnd) === 0;
 */
export function tsCrc32(buf: Uint8Array, start: number, end: number): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ buf[i]!) & 0xff]!) >>> 0;
  return crc >>> 0;
}

const VIDEO_TYPES = new Set([0x01, 0x02, 0x10, 0x1b, 0x24, 0x42, 0xd1, 0xea]);
const AUDIO_TYPES = new Set([0x03, 0x04, 0x0f, 0x11, 0x81, 0x82, 0x87]);
// stream ids whose PES has no optional header: program_stream_map, padding, private_2, ECM, EMM, ...
const NO_PES_HEADER = new Set([0xbc, 0xbe, 0xbf, 0xf0, 0xf1, 0xff, 0xf2, 0xf8]);

/** What an elementary stream carries, by its PMT stream type. */
export type TsStreamKind = 'video' | 'audio' | 'other';

/** One elementary stream a PMT lists. */
export interface TsStream { pid: number; streamType: number; kind: TsStreamKind }

/**
 * The kind of a PMT stream type (MPEG video, H.264, HEVC, ... are video; MPEG audio, AAC, AC-3, ... audio).
 *
 * @example
 * tsStreamKind(0x1b); // 'video' (H.264)
 */
export function tsStreamKind(streamType: number): TsStreamKind {
  if (VIDEO_TYPES.has(streamType)) return 'video';
  return AUDIO_TYPES.has(streamType) ? 'audio' : 'other';
}

/**
 * The PID of the packet at `o`.
 *
 * @example
 * if (tsPid(chunk, o) === 0) tables.push(tsPat(chunk, o));
 */
export function tsPid(b: Buffer, o = 0): number {
  return ((b[o + 1]! & 0x1f) << 8) | b[o + 2]!;
}

/**
 * payload_unit_start_indicator: a PES or a section starts in the packet at `o`.
 *
 * @example
 * const starts = tsUnitStart(packet);
 */
export function tsUnitStart(b: Buffer, o = 0): boolean {
  return (b[o + 1]! & 0x40) !== 0;
}

/**
 * Whether the packet at `o` carries a payload (not only an adaptation field).
 *
 * @example
 * if (!tsHasPayload(packet)) return;
 */
export function tsHasPayload(b: Buffer, o = 0): boolean {
  return (b[o + 3]! & 0x10) !== 0;
}

function adaptationLength(b: Buffer, o: number): number {
  return (b[o + 3]! & 0x20) !== 0 ? b[o + 4]! : -1;
}

/**
 * Where the payload of the packet at `o` starts (absolute, after the header and the adaptation
 * field); `o + 188` when it has none.
 *
 * @example
 * const at = tsPayloadAt(packet); // 4 for a packet without adaptation field
 */
export function tsPayloadAt(b: Buffer, o = 0): number {
  if (!tsHasPayload(b, o)) return o + TS_PACKET;
  const af = adaptationLength(b, o);
  return Math.min(o + TS_PACKET, af < 0 ? o + 4 : o + 5 + af);
}

/**
 * random_access_indicator, which muxers set on the first packet of a keyframe.
 *
 * @example
 * if (tsPid(chunk, o) === videoPid && tsRandomAccess(chunk, o)) cut(o);
 */
export function tsRandomAccess(b: Buffer, o = 0): boolean {
  return adaptationLength(b, o) > 0 && (b[o + 5]! & 0x40) !== 0;
}

/**
 * Offset of the PES header's flags byte (PTS_DTS_flags in its top bits) when the packet at `o`
 * starts a PES with a PTS, else -1.
 *
 * @example
 * const f = tsPesFlagsAt(packet);
 * if (f >= 0) tsWriteStamp(packet, f + 2, tsReadStamp(packet, f + 2) + 90_000);
 */
export function tsPesFlagsAt(b: Buffer, o = 0): number {
  if (!tsUnitStart(b, o)) return -1;
  const p = tsPayloadAt(b, o);
  if (p + 14 > o + TS_PACKET || b[p] !== 0 || b[p + 1] !== 0 || b[p + 2] !== 1) return -1;
  if (NO_PES_HEADER.has(b[p + 3]!)) return -1;
  return (b[p + 7]! & 0x80) !== 0 ? p + 7 : -1;
}

/**
 * Reads a 5-byte PTS/DTS field at `at` (marker bits not checked).
 *
 * @example
 * const pts = tsReadStamp(packet, tsPesFlagsAt(packet) + 2);
 */
export function tsReadStamp(b: Uint8Array, at: number): number {
  return ((b[at]! >> 1) & 0x07) * 2 ** 30 + ((b[at + 1]! << 22) | ((b[at + 2]! >> 1) << 15) | (b[at + 3]! << 7) | (b[at + 4]! >> 1));
}

/**
 * Writes a 5-byte PTS/DTS field at `at`, modulo 2^33, with its 4-bit prefix (2 = PTS only, 3 = the
 * PTS of a pair, 1 = DTS; by default the prefix the field has).
 *
 * @example
 * tsWriteStamp(header, 9, 90_000, 2);
 */
export function tsWriteStamp(b: Uint8Array, at: number, ts: number, prefix = b[at]! >> 4): void {
  const v = ((ts % TS_WRAP) + TS_WRAP) % TS_WRAP;
  const hi = Math.floor(v / 2 ** 30);
  const lo = v % 2 ** 30;
  b[at] = (prefix << 4) | (hi << 1) | 1;
  b[at + 1] = (lo >>> 22) & 0xff;
  b[at + 2] = (((lo >>> 15) & 0x7f) << 1) | 1;
  b[at + 3] = (lo >>> 7) & 0xff;
  b[at + 4] = ((lo & 0x7f) << 1) | 1;
}

/**
 * PTS and DTS (DTS = PTS when absent) of the packet at `o` when it starts a PES with a PTS; null otherwise.
 *
 * @example
 * const stamps = tsPesStamps(chunk, o); // { pts: 900000, dts: 897000 }
 */
export function tsPesStamps(b: Buffer, o = 0): { pts: number; dts: number } | null {
  const f = tsPesFlagsAt(b, o);
  if (f < 0) return null;
  const pts = tsReadStamp(b, f + 2);
  return { pts, dts: (b[f]! & 0x40) !== 0 ? tsReadStamp(b, f + 7) : pts };
}

/** Start and end (CRC excluded) of the section starting in the packet at `o`. */
function sectionAt(b: Buffer, o: number): { at: number; end: number } | undefined {
  if (!tsUnitStart(b, o)) return undefined;
  let at = tsPayloadAt(b, o);
  if (at >= o + TS_PACKET) return undefined;
  at += 1 + b[at]!; // the pointer field
  if (at + 3 > o + TS_PACKET) return undefined;
  const len = ((b[at + 1]! & 0x0f) << 8) | b[at + 2]!;
  return { at, end: Math.min(at + 3 + len - 4, o + TS_PACKET) };
}

/**
 * The PMT PIDs a PAT packet lists (program 0, the network PID, left out); [] for another packet.
 *
 * @example
 * const pmtPids = tsPat(chunk, o);
 */
export function tsPat(b: Buffer, o = 0): number[] {
  const s = sectionAt(b, o);
  if (!s || b[s.at] !== 0x00) return [];
  const pids: number[] = [];
  for (let i = s.at + 8; i + 4 <= s.end; i += 4) {
    if (((b[i]! << 8) | b[i + 1]!) !== 0) pids.push(((b[i + 2]! & 0x1f) << 8) | b[i + 3]!);
  }
  return pids;
}

/**
 * The PCR PID and the elementary streams, in order, of a PMT packet; null for another packet.
 *
 * @example
 * const video = tsPmt(chunk, o)?.streams.find((s) => s.kind === 'video');
 */
export function tsPmt(b: Buffer, o = 0): { pcrPid: number; streams: TsStream[] } | null {
  const s = sectionAt(b, o);
  if (!s || b[s.at] !== 0x02 || s.at + 12 > s.end) return null;
  const pcrPid = ((b[s.at + 8]! & 0x1f) << 8) | b[s.at + 9]!;
  const streams: TsStream[] = [];
  for (let i = s.at + 12 + (((b[s.at + 10]! & 0x0f) << 8) | b[s.at + 11]!); i + 5 <= s.end;) {
    const streamType = b[i]!;
    streams.push({ pid: ((b[i + 1]! & 0x1f) << 8) | b[i + 2]!, streamType, kind: tsStreamKind(streamType) });
    i += 5 + (((b[i + 3]! & 0x0f) << 8) | b[i + 4]!);
  }
  return { pcrPid, streams };
}

/**
 * The stream whose keyframes a reader cuts at: the first video stream, else the first stream.
 *
 * @example
 * const primary = tsPrimary(tsPmt(chunk, o)?.streams ?? []);
 */
export function tsPrimary(streams: readonly TsStream[]): TsStream | undefined {
  return streams.find((s) => s.kind === 'video') ?? streams[0];
}

/**
 * `pts` unwrapped next to `near` (both 90 kHz): the value within half a wrap of it.
 *
 * @example
 * const t = tsUnwrap(raw, last); // continues past 2^33
 */
export function tsUnwrap(pts: number, near: number): number {
  let v = pts + Math.round((near - pts) / TS_WRAP) * TS_WRAP;
  if (v - near > TS_WRAP / 2) v -= TS_WRAP;
  return v;
}

/**
 * Splits a byte stream into packets (views, no copy), skipping garbage byte by byte to the next
 * sync byte; returns the bytes left over (a partial packet).
 *
 * @example
 * rest = tsSplit(Buffer.concat([rest, chunk]), packets);
 */
export function tsSplit(buf: Buffer, out: Buffer[]): Buffer {
  let i = 0;
  while (i + TS_PACKET <= buf.length) {
    if (buf[i] !== TS_SYNC) { i++; continue; }
    out.push(buf.subarray(i, i + TS_PACKET));
    i += TS_PACKET;
  }
  return buf.subarray(i);
}
