/**
 * The wall-clock barcode of the WHEP delay bench (`whep.ts`): 64 big blocks, black or white, in
 * the top-left corner of each 1280x720 frame: 48 bits of the frame's Date.now() then a CRC-16 of
 * them (a misread block fails the check and the frame is left out, never counted with a wrong time).
 * Blocks of 32x32 px on a flat grey field survive H.264 at 2.5 Mbit/s; the reader samples the
 * middle 16x16 of each block. The picture below and beside it is deterministic noise that keeps
 * the encoder at its bitrate (see `background`).
 */
export const WIDTH = 1280;
export const HEIGHT = 720;
export const FPS = 25;

export interface Layout { x: number; y: number; block: number; cols: number; rows: number }

/** 16 columns x 4 rows of 32 px blocks at (64, 64): a 512x128 px code in a flat grey field. */
export const LAYOUT: Layout = { x: 64, y: 64, block: 32, cols: 16, rows: 4 };
/** The flat field around the code (no noise there): 32 px beyond it on every side. */
const FIELD = { x0: 32, y0: 32, x1: 64 + 512 + 32, y1: 64 + 128 + 32 };

const BLACK = 16;
const WHITE = 235;
const GREY = 128;

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xffff) of bytes. */
export function crc16(bytes: ArrayLike<number>): number {
  let crc = 0xffff;
  for (let i = 0; i < bytes.length; i++) {
    crc ^= bytes[i]! << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The 64 bits of a stamp, most significant first: 48 bits of `ms`, then the CRC-16 of its 6 bytes. */
export function stampBits(ms: number): number[] {
  const bytes: number[] = [];
  for (let i = 5; i >= 0; i--) bytes.push(Math.floor(ms / 2 ** (8 * i)) % 256);
  const crc = crc16(bytes);
  bytes.push(crc >> 8, crc & 0xff);
  const bits: number[] = [];
  for (const byte of bytes) for (let b = 7; b >= 0; b--) bits.push((byte >> b) & 1);
  return bits;
}

/** A small deterministic PRNG (xorshift32): the same noise on every run. */
function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s;
  };
}

/**
 * `count` background frames (yuv420p): grey chroma, and luma noise of 8x8 px cells (grey levels
 * 40-215) everywhere but the flat field of the code, a different pattern in each frame, so that
 * the encoder spends its whole bitrate (an easy picture would leave a 2.5 Mbit/s stream far below it).
 */
export function background(count: number, seed = 33): Buffer[] {
  const next = xorshift(seed);
  const frames: Buffer[] = [];
  const lumaSize = WIDTH * HEIGHT;
  for (let f = 0; f < count; f++) {
    const frame = Buffer.alloc(lumaSize * 3 / 2, GREY);
    for (let cy = 0; cy < HEIGHT; cy += 8) {
      for (let cx = 0; cx < WIDTH; cx += 8) {
        if (cx >= FIELD.x0 && cx < FIELD.x1 && cy >= FIELD.y0 && cy < FIELD.y1) continue;
        const v = 40 + (next() % 176);
        for (let y = cy; y < cy + 8; y++) frame.fill(v, y * WIDTH + cx, y * WIDTH + cx + 8);
      }
    }
    frames.push(frame);
  }
  return frames;
}

/** Draws the stamp of `ms` into the luma plane of a yuv420p frame. */
export function drawStamp(frame: Buffer, ms: number, l: Layout = LAYOUT): void {
  const bits = stampBits(ms);
  for (let i = 0; i < bits.length; i++) {
    const x0 = l.x + (i % l.cols) * l.block;
    const y0 = l.y + Math.floor(i / l.cols) * l.block;
    const v = bits[i] ? WHITE : BLACK;
    for (let y = y0; y < y0 + l.block; y++) frame.fill(v, y * WIDTH + x0, y * WIDTH + x0 + l.block);
  }
}

/**
 * Reads a stamp from RGBA pixels of the code's area (`width` px wide, its top-left at the code's
 * origin): the mean of the middle half of each block against mid-grey, then the CRC. The stamp in
 * ms, or -1 when the check fails. Self-contained (no outer names): the page runs its source.
 */
export function readStamp(rgba: Uint8ClampedArray, width: number, l: { block: number; cols: number; rows: number }): number {
  const bytes: number[] = [];
  let byte = 0;
  for (let i = 0; i < l.cols * l.rows; i++) {
    const x0 = (i % l.cols) * l.block + l.block / 4;
    const y0 = Math.floor(i / l.cols) * l.block + l.block / 4;
    let sum = 0;
    for (let y = y0; y < y0 + l.block / 2; y++) {
      for (let x = x0; x < x0 + l.block / 2; x++) {
        const p = (y * width + x) * 4;
        sum += rgba[p]! + rgba[p + 1]! + rgba[p + 2]!;
      }
    }
    byte = (byte << 1) | (sum / ((l.block / 2) ** 2 * 3) >= 128 ? 1 : 0);
    if (i % 8 === 7) { bytes.push(byte); byte = 0; }
  }
  let crc = 0xffff;
  for (let i = 0; i < 6; i++) {
    crc ^= bytes[i]! << 8;
    for (let b = 0; b < 8; b++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  if (crc !== ((bytes[6]! << 8) | bytes[7]!)) return -1;
  let ms = 0;
  for (let i = 0; i < 6; i++) ms = ms * 256 + bytes[i]!;
  return ms;
}
