// Reading and rewriting single 188-byte MPEG-TS packets in place (ISO/IEC 13818-1 2.4.3): the PID,
// the continuity counter, the adaptation field (PCR, random access flag) and the PTS/DTS of a PES
// header. Pure functions over Buffers, so the splicer above them can be tested on recorded packets.

export const TS_SIZE = 188;
export const SYNC = 0x47;
/** Timestamps are 33-bit counters of a 90 kHz clock. */
export const TS_WRAP = 2 ** 33;

export function pidOf(p: Buffer): number {
  return ((p[1]! & 0x1f) << 8) | p[2]!;
}

/** payload_unit_start_indicator: a PES or a section starts in this packet. */
export function isUnitStart(p: Buffer): boolean {
  return (p[1]! & 0x40) !== 0;
}

export function hasPayload(p: Buffer): boolean {
  return (p[3]! & 0x10) !== 0;
}

function adaptationLength(p: Buffer): number {
  return (p[3]! & 0x20) !== 0 ? p[4]! : -1;
}

/** Where the payload starts (after the 4-byte header and the adaptation field); 188 when none. */
export function payloadOffset(p: Buffer): number {
  const af = adaptationLength(p);
  return af < 0 ? 4 : 5 + af;
}

/** random_access_indicator, which ffmpeg's muxer sets on the first packet of a keyframe. */
export function isRandomAccess(p: Buffer): boolean {
  return adaptationLength(p) > 0 && (p[5]! & 0x40) !== 0;
}

export function setContinuity(p: Buffer, cc: number): void {
  p[3] = (p[3]! & 0xf0) | (cc & 0x0f);
}

/** The PCR in 27 MHz units, or -1 when the packet has none. */
export function readPcr(p: Buffer): number {
  if (adaptationLength(p) < 7 || (p[5]! & 0x10) === 0) return -1;
  const base = p[6]! * 2 ** 25 + p[7]! * 2 ** 17 + p[8]! * 2 ** 9 + p[9]! * 2 + (p[10]! >> 7);
  const ext = ((p[10]! & 1) << 8) | p[11]!;
  return base * 300 + ext;
}

export function writePcr(p: Buffer, pcr27: number): void {
  const base = Math.floor(pcr27 / 300) % TS_WRAP;
  const ext = Math.floor(pcr27 % 300);
  p[6] = Math.floor(base / 2 ** 25) & 0xff;
  p[7] = Math.floor(base / 2 ** 17) & 0xff;
  p[8] = Math.floor(base / 2 ** 9) & 0xff;
  p[9] = Math.floor(base / 2) & 0xff;
  p[10] = ((base % 2) << 7) | 0x7e | (ext >> 8);
  p[11] = ext & 0xff;
}

/** Offset of the PES header's flag bytes when the packet starts a PES with PTS, else -1. */
function pesFlags(p: Buffer): number {
  if (!isUnitStart(p)) return -1;
  const o = payloadOffset(p);
  if (o + 14 > TS_SIZE || p[o] !== 0 || p[o + 1] !== 0 || p[o + 2] !== 1) return -1;
  const sid = p[o + 3]!;
  // stream ids without the optional header: program_stream_map, padding, private_2, ECM, EMM, ...
  if (sid === 0xbc || sid === 0xbe || sid === 0xbf || sid === 0xf0 || sid === 0xf1 || sid === 0xff || sid === 0xf2 || sid === 0xf8) return -1;
  return (p[o + 7]! & 0x80) !== 0 ? o + 7 : -1;
}

function readStamp(p: Buffer, at: number): number {
  return ((p[at]! >> 1) & 0x07) * 2 ** 30 + (p[at + 1]! << 22 | (p[at + 2]! >> 1) << 15 | p[at + 3]! << 7 | p[at + 4]! >> 1);
}

function writeStamp(p: Buffer, at: number, ts: number): void {
  const v = ((ts % TS_WRAP) + TS_WRAP) % TS_WRAP;
  const hi = Math.floor(v / 2 ** 30);
  const lo = v % 2 ** 30;
  p[at] = (p[at]! & 0xf0) | (hi << 1) | 1;
  p[at + 1] = (lo >> 22) & 0xff;
  p[at + 2] = (((lo >> 15) & 0x7f) << 1) | 1;
  p[at + 3] = (lo >> 7) & 0xff;
  p[at + 4] = ((lo & 0x7f) << 1) | 1;
}

export interface PesStamps { pts: number; dts: number }

/** PTS and DTS (DTS = PTS when absent) of a packet starting a PES; null otherwise. */
export function readPesStamps(p: Buffer): PesStamps | null {
  const f = pesFlags(p);
  if (f < 0) return null;
  const pts = readStamp(p, f + 2);
  const dts = (p[f]! & 0x40) !== 0 ? readStamp(p, f + 7) : pts;
  return { pts, dts };
}

/** Adds `delta` (90 kHz ticks, may be negative) to the PTS and DTS, modulo 2^33. */
export function shiftPesStamps(p: Buffer, delta: number): void {
  const f = pesFlags(p);
  if (f < 0) return;
  writeStamp(p, f + 2, readStamp(p, f + 2) + delta);
  if ((p[f]! & 0x40) !== 0) writeStamp(p, f + 7, readStamp(p, f + 7) + delta);
}

/** Splits a byte stream into packets; returns the views and the bytes left over (a partial packet). */
export function splitPackets(buf: Buffer, out: Buffer[]): Buffer {
  let i = 0;
  while (i + TS_SIZE <= buf.length) {
    if (buf[i] !== SYNC) { i++; continue; } // resync byte by byte after garbage
    out.push(buf.subarray(i, i + TS_SIZE));
    i += TS_SIZE;
  }
  return buf.subarray(i);
}
