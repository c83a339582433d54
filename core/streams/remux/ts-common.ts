/** MPEG-TS constants and the few field codecs both directions share (33-bit values kept out of 32-bit bit operations). */
import { TS_WRAP as WRAP33, tsReadStamp, tsWriteStamp } from '../../../sdk/index.ts';

/** 2^33 (`WRAP33`): the PTS/DTS/PCR base modulus. */
export { TS_PACKET, TS_SYNC, TS_WRAP as WRAP33 } from '../../../sdk/index.ts';
export const PID_PAT = 0;
export const PID_PMT = 0x1000;
export const PID_VIDEO = 0x100;
export const PID_AUDIO = 0x101;

export const ST_MPEG1_AUDIO = 0x03;
export const ST_MPEG2_AUDIO = 0x04;
export const ST_AAC_ADTS = 0x0f;
export const ST_H264 = 0x1b;


const CRC_TABLE = new Uint32Array(256);
for (let i = 0; i < 256; i++) {
  let c = i << 24;
  for (let k = 0; k < 8; k++) c = (c & 0x80000000) !== 0 ? (c << 1) ^ 0x04c11db7 : c << 1;
  CRC_TABLE[i] = c >>> 0;
}

/** CRC-32/MPEG-2 of buf[start, end). */
export function crc32(buf: Uint8Array, start: number, end: number): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ buf[i]) & 0xff]) >>> 0;
  return crc >>> 0;
}

/** Writes a 5-byte PTS/DTS field (prefix 2 = PTS only, 3 = PTS of a pair, 1 = DTS). */
export function writeTimestamp(buf: Buffer, at: number, prefix: number, ts: number): void {
  tsWriteStamp(buf, at, ts, prefix);
}

/** Reads a 5-byte PTS/DTS field (markers not checked). */
export const readTimestamp = tsReadStamp;

/** Writes a 6-byte PCR (base in 90 kHz, extension 0). */
export function writePcr(buf: Buffer, at: number, base: number): void {
  const v = ((base % WRAP33) + WRAP33) % WRAP33;
  const hi = Math.floor(v / 33554432); // bits 32..25
  const lo = v % 33554432;
  buf[at] = hi & 0xff;
  buf[at + 1] = (lo >>> 17) & 0xff;
  buf[at + 2] = (lo >>> 9) & 0xff;
  buf[at + 3] = (lo >>> 1) & 0xff;
  buf[at + 4] = ((lo & 1) << 7) | 0x7e;
  buf[at + 5] = 0;
}
