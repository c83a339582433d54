/** MPEG-TS constants and the few field codecs the FLV-to-TS direction writes with (33-bit values kept out of 32-bit bit operations; the SDK reads). */
import { TS_WRAP as WRAP33, tsWriteStamp } from '../../../sdk/index.ts';

/** 2^33 (`WRAP33`): the PTS/DTS/PCR base modulus. */
export { TS_PACKET, TS_SYNC, TS_WRAP as WRAP33 } from '../../../sdk/index.ts';
export const PID_PAT = 0;
export const PID_PMT = 0x1000;
export const PID_VIDEO = 0x100;
export const PID_AUDIO = 0x101;

/** CRC-32/MPEG-2 of buf[start, end). */
export { tsCrc32 as crc32 } from '../../../sdk/index.ts';

/** Writes a 5-byte PTS/DTS field (prefix 2 = PTS only, 3 = PTS of a pair, 1 = DTS). */
export function writeTimestamp(buf: Buffer, at: number, prefix: number, ts: number): void {
  tsWriteStamp(buf, at, ts, prefix);
}

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
