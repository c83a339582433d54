// Rewriting single 188-byte MPEG-TS packets in place (ISO/IEC 13818-1 2.4.3): the continuity counter,
// the PCR and the PTS/DTS of a PES header. Reading them is the SDK's (sdk/mpegts.ts), under the
// names the relay uses. Pure functions over Buffers, so the splicer above them can be tested on
// recorded packets.
import {
  TS_WRAP, tsHasPayload, tsPesFlagsAt, tsPesStamps, tsPid, tsRandomAccess, tsReadStamp, tsSplit, tsUnitStart, tsWriteStamp,
} from '../../../sdk/index.ts';

export { TS_PACKET as TS_SIZE, TS_SYNC as SYNC, TS_WRAP } from '../../../sdk/index.ts';

export const pidOf = (p: Buffer): number => tsPid(p);
/** payload_unit_start_indicator: a PES or a section starts in this packet. */
export const isUnitStart = (p: Buffer): boolean => tsUnitStart(p);
export const hasPayload = (p: Buffer): boolean => tsHasPayload(p);
/** random_access_indicator, which ffmpeg's muxer sets on the first packet of a keyframe. */
export const isRandomAccess = (p: Buffer): boolean => tsRandomAccess(p);
/** Splits a byte stream into packets; returns the views and the bytes left over (a partial packet). */
export const splitPackets = tsSplit;

/** Where the payload starts (after the 4-byte header and the adaptation field). */
export function payloadOffset(p: Buffer): number {
  const af = (p[3]! & 0x20) !== 0 ? p[4]! : -1;
  return af < 0 ? 4 : 5 + af;
}

export function setContinuity(p: Buffer, cc: number): void {
  p[3] = (p[3]! & 0xf0) | (cc & 0x0f);
}

function hasPcr(p: Buffer): boolean {
  return (p[3]! & 0x20) !== 0 && p[4]! >= 7 && (p[5]! & 0x10) !== 0;
}

/** The PCR in 27 MHz units, or -1 when the packet has none. */
export function readPcr(p: Buffer): number {
  if (!hasPcr(p)) return -1;
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

export interface PesStamps { pts: number; dts: number }

/** PTS and DTS (DTS = PTS when absent) of a packet starting a PES; null otherwise. */
export const readPesStamps = (p: Buffer): PesStamps | null => tsPesStamps(p);

/** Adds `delta` (90 kHz ticks, may be negative) to the PTS and DTS, modulo 2^33. */
export function shiftPesStamps(p: Buffer, delta: number): void {
  const f = tsPesFlagsAt(p);
  if (f < 0) return;
  tsWriteStamp(p, f + 2, tsReadStamp(p, f + 2) + delta);
  if ((p[f]! & 0x40) !== 0) tsWriteStamp(p, f + 7, tsReadStamp(p, f + 7) + delta);
}
