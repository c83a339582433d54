/*
 * H.264 (ISO/IEC 14496-10 and -15) helpers: the AVCDecoderConfigurationRecord that FLV and MP4
 * carry as the video sequence header, and Annex B start-code splitting. Pure functions, used by
 * the core's FLV <-> MPEG-TS remux and by packagers of the stream table's packets.
 */

/**
 * nal_unit_type of an IDR slice (a keyframe's picture).
 *
 * @example
 * if ((nal[0]! & 0x1f) === NAL_IDR) key = true;
 */
export const NAL_IDR = 5;
/**
 * nal_unit_type of a sequence parameter set.
 *
 * @example
 * if ((nal[0]! & 0x1f) === NAL_SPS) sps.push(nal);
 */
export const NAL_SPS = 7;
/**
 * nal_unit_type of a picture parameter set.
 *
 * @example
 * if ((nal[0]! & 0x1f) === NAL_PPS) pps.push(nal);
 */
export const NAL_PPS = 8;
/**
 * nal_unit_type of an access unit delimiter.
 *
 * @example
 * if ((nal[0]! & 0x1f) === NAL_AUD) continue;
 */
export const NAL_AUD = 9;

/** The parts of an AVCDecoderConfigurationRecord a muxer needs. */
export interface AvcConfig {
  /** Bytes of each NAL length prefix in the AVCC frames (1, 2 or 4). */
  lengthSize: number;
  sps: Buffer[];
  pps: Buffer[];
}

/**
 * Parses an AVCDecoderConfigurationRecord at b[at..]; undefined when malformed (version not 1, a
 * 3-byte length size, no SPS or no PPS, a list running past the end).
 *
 * @example
 * const avc = parseAvcConfig(tag.body, 5); // an FLV video sequence header: 5 bytes before the record
 */
export function parseAvcConfig(b: Buffer, at: number): AvcConfig | undefined {
  if (b.length < at + 7 || b[at] !== 1) return undefined;
  const lengthSize = (b[at + 4] & 3) + 1;
  if (lengthSize === 3) return undefined;
  let p = at + 5;
  const sps = readList(b, p, b[p] & 0x1f);
  if (!sps) return undefined;
  p = sps.next;
  if (p >= b.length) return undefined;
  const pps = readList(b, p, b[p]);
  if (!pps || sps.list.length === 0 || pps.list.length === 0) return undefined;
  return { lengthSize, sps: sps.list, pps: pps.list };
}

function readList(b: Buffer, p: number, count: number): { list: Buffer[]; next: number } | undefined {
  p += 1;
  const list: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    if (p + 2 > b.length) return undefined;
    const len = b.readUInt16BE(p);
    if (len === 0 || p + 2 + len > b.length) return undefined;
    list.push(Buffer.from(b.subarray(p + 2, p + 2 + len)));
    p += 2 + len;
  }
  return { list, next: p };
}

/**
 * An AVCDecoderConfigurationRecord (4-byte NAL lengths) of SPS and PPS lists (at most 31 and 255).
 *
 * @example
 * const record = buildAvcConfig([sps], [pps]);
 */
export function buildAvcConfig(sps: Buffer[], pps: Buffer[]): Buffer {
  let size = 7;
  for (const s of sps) size += 2 + s.length;
  for (const s of pps) size += 2 + s.length;
  const out = Buffer.allocUnsafe(size);
  const first = sps[0];
  out[0] = 1;
  out[1] = first.length > 1 ? first[1] : 66;
  out[2] = first.length > 2 ? first[2] : 0;
  out[3] = first.length > 3 ? first[3] : 30;
  out[4] = 0xff;
  out[5] = 0xe0 | sps.length;
  let p = 6;
  for (const s of sps) { out.writeUInt16BE(s.length, p); out.set(s, p + 2); p += 2 + s.length; }
  out[p++] = pps.length;
  for (const s of pps) { out.writeUInt16BE(s.length, p); out.set(s, p + 2); p += 2 + s.length; }
  return out;
}

/**
 * Splits the Annex B bytes b[start, end) into NAL units: their bounds go into `starts`/`ends`
 * (reused arrays; trailing zero bytes trimmed); returns how many.
 *
 * @example
 * const n = splitAnnexB(pes, 0, pes.length, starts, ends);
 */
export function splitAnnexB(b: Uint8Array, start: number, end: number, starts: number[], ends: number[]): number {
  let n = 0;
  let nal = -1;
  let i = start;
  while (i + 2 < end) {
    if (b[i + 2] > 1) { i += 3; continue; }
    if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1) {
      if (nal >= 0) n = close(b, nal, i, starts, ends, n);
      nal = i + 3;
      i += 3;
    } else {
      i++;
    }
  }
  if (nal >= 0) n = close(b, nal, end, starts, ends, n);
  return n;
}

function close(b: Uint8Array, from: number, to: number, starts: number[], ends: number[], n: number): number {
  while (to > from && b[to - 1] === 0) to--;
  if (to <= from) return n;
  starts[n] = from;
  ends[n] = to;
  return n + 1;
}
