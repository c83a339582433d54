// The pixel size an error-frame image declares, read from its header before any decoder sees it: a
// 750 KB PNG of 16000x16000 took ffmpeg 109 s and 3.1 GB to encode into a clip.

/** The most pixels an error frame may have (a 4K UHD image, 3840x2160), and the most on one side. */
export const MAX_FRAME_PIXELS = 3840 * 2160;
export const MAX_FRAME_SIDE = 8192;

export interface ImageSize { width: number; height: number }

/** PNG: the IHDR chunk comes first (RFC 2083 / ISO 15948). */
function png(b: Buffer): ImageSize | undefined {
  if (b.length < 24 || b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

function gif(b: Buffer): ImageSize | undefined {
  return b.length < 10 ? undefined : { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

/** BMP: the core header (12 bytes, 16-bit sides) or an info header (32-bit, a negative height is top-down). */
function bmp(b: Buffer): ImageSize | undefined {
  if (b.length < 26) return undefined;
  const dib = b.readUInt32LE(14);
  if (dib === 12) return { width: b.readUInt16LE(18), height: b.readUInt16LE(20) };
  return { width: Math.abs(b.readInt32LE(18)), height: Math.abs(b.readInt32LE(22)) };
}

/** WebP: the first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended, the canvas). */
function webp(b: Buffer): ImageSize | undefined {
  if (b.length < 30) return undefined;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === 'VP8L') {
    const bits = b.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  return undefined;
}

const isSof = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;

/**
 * JPEG: every frame header (SOFn) in the file, the largest sides of all (a decoder takes a later
 * SOF as a new picture); segments are walked by their lengths, scan data up to the next marker.
 */
function jpeg(b: Buffer): ImageSize | undefined {
  let width = 0;
  let height = 0;
  let i = 2;
  while (i + 3 < b.length) {
    if (b[i] !== 0xff) {
      i++; // scan data: look for the next marker
      continue;
    }
    const m = b[i + 1]!;
    if (m === 0xff) {
      i++; // fill byte
      continue;
    }
    if (m === 0x00 || m === 0x01 || (m >= 0xd0 && m <= 0xd8)) {
      i += 2; // a stuffed 0xff, TEM, RSTn, SOI: no length
      continue;
    }
    if (m === 0xd9) break;
    const len = b.readUInt16BE(i + 2);
    if (isSof(m)) {
      if (i + 9 > b.length) return undefined;
      height = Math.max(height, b.readUInt16BE(i + 5));
      width = Math.max(width, b.readUInt16BE(i + 7));
    }
    i += 2 + len;
  }
  return width > 0 || height > 0 ? { width, height } : undefined;
}

/** The sides the image's header declares; undefined when it is no PNG, JPEG, BMP, WebP or GIF, or is cut short. */
export function imageSize(b: Buffer): ImageSize | undefined {
  if (b.length > 8 && b.readUInt32BE(0) === 0x89504e47) return png(b);
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8) return jpeg(b);
  if (b.length > 2 && b[0] === 0x42 && b[1] === 0x4d) return bmp(b);
  if (b.length > 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  if (b.length > 4 && b.toString('latin1', 0, 4) === 'GIF8') return gif(b);
  return undefined;
}

/** Why an image may not be an error frame (its size unknown, or too many pixels); undefined when it may. */
export function imageSizeProblem(b: Buffer): string | undefined {
  const s = imageSize(b);
  if (!s) return 'not a PNG, JPEG, BMP, WebP or GIF image whose size can be read';
  if (s.width === 0 || s.height === 0) return 'the image has no pixels';
  if (s.width > MAX_FRAME_SIDE || s.height > MAX_FRAME_SIDE || s.width * s.height > MAX_FRAME_PIXELS) {
    return `the image is ${s.width}x${s.height}: at most ${MAX_FRAME_PIXELS} pixels (3840x2160) and ${MAX_FRAME_SIDE} on a side`;
  }
  return undefined;
}
