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

/** The picture size an SPS declares, cropping applied. */
export interface AvcSize { width: number; height: number }

/** Reads Exp-Golomb coded fields from an RBSP (emulation prevention bytes already removed). */
class BitReader {
  private bit = 0;
  private readonly b: Buffer;
  constructor(b: Buffer) { this.b = b; }
  u(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const byte = this.bit >> 3;
      if (byte >= this.b.length) throw new RangeError('SPS overrun');
      v = v * 2 + ((this.b[byte]! >> (7 - (this.bit & 7))) & 1);
      this.bit++;
    }
    return v;
  }
  ue(): number {
    let zeros = 0;
    while (this.u(1) === 0) if (++zeros > 31) throw new RangeError('SPS Exp-Golomb code too long');
    return 2 ** zeros - 1 + this.u(zeros);
  }
  se(): number {
    const k = this.ue();
    return k & 1 ? (k + 1) / 2 : -k / 2;
  }
}

/** The largest picture side H.264's levels allow (level 6.2: 139,264 macroblocks, 8192 x 4320 and the like). */
const MAX_SIDE = 16_384;

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

function skipScalingLists(r: BitReader, chroma: number): void {
  if (r.u(1) === 0) return;
  for (let i = 0; i < (chroma === 3 ? 12 : 8); i++) {
    if (r.u(1) === 0) continue;
    let last = 8;
    let next = 8;
    for (let j = 0; j < (i < 6 ? 16 : 64); j++) {
      if (next !== 0) next = (last + r.se() + 256) % 256;
      if (next !== 0) last = next;
    }
  }
}

function skipPicOrder(r: BitReader): void {
  const type = r.ue();
  if (type === 0) r.ue();
  else if (type === 1) {
    r.u(1);
    r.se();
    r.se();
    for (let n = r.ue(), i = 0; i < n; i++) r.se();
  }
}

/**
 * The width and height an SPS NAL unit (header byte included) declares, frame cropping applied;
 * undefined when it is not an SPS, runs short, or declares no picture (cropped to nothing, or a side
 * over 16,384).
 *
 * @example
 * const size = avcSize(parseAvcConfig(record, 0)!.sps[0]!); // { width: 1280, height: 720 }
 */
export function avcSize(sps: Buffer): AvcSize | undefined {
  if (sps.length < 4 || (sps[0]! & 0x1f) !== NAL_SPS) return undefined;
  const rbsp: number[] = [];
  for (let i = 1; i < sps.length; i++) {
    if (i >= 3 && sps[i] === 3 && sps[i - 1] === 0 && sps[i - 2] === 0) continue;
    rbsp.push(sps[i]!);
  }
  const r = new BitReader(Buffer.from(rbsp));
  try {
    const profile = r.u(8);
    r.u(16);
    r.ue();
    let chroma = 1;
    if (HIGH_PROFILES.has(profile)) {
      chroma = r.ue();
      if (chroma === 3) r.u(1);
      r.ue();
      r.ue();
      r.u(1);
      skipScalingLists(r, chroma);
    }
    r.ue();
    skipPicOrder(r);
    r.ue();
    r.u(1);
    const mbWidth = r.ue() + 1;
    const mapHeight = r.ue() + 1;
    const frameOnly = r.u(1);
    if (!frameOnly) r.u(1);
    r.u(1);
    const crop = r.u(1) ? [r.ue(), r.ue(), r.ue(), r.ue()] : [0, 0, 0, 0];
    const cropX = chroma === 0 || chroma === 3 ? 1 : 2;
    const cropY = (chroma === 1 ? 2 : 1) * (2 - frameOnly);
    const width = mbWidth * 16 - cropX * (crop[0]! + crop[1]!);
    const height = (2 - frameOnly) * mapHeight * 16 - cropY * (crop[2]! + crop[3]!);
    // a crop as large as the picture, or a size no H.264 level allows, is a broken header
    return width > 0 && height > 0 && width <= MAX_SIDE && height <= MAX_SIDE ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}
