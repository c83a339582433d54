/** AAC helpers: AudioSpecificConfig <-> ADTS headers. */

export interface AacConfig {
  /** ADTS profile: audio object type - 1 (0 Main, 1 LC, 2 SSR, 3 LTP). */
  profile: number;
  freqIndex: number;
  channels: number;
}

export const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/**
 * Reads the fields ADTS can carry from an AudioSpecificConfig at b[at..]. HE-AAC (object type 5 or
 * 29, explicit SBR/PS) is carried as its core (LC at the core rate: decoders find SBR implicitly);
 * escaped object types, an explicit frequency and channel configuration 0 are refused (undefined).
 */
export function parseAsc(b: Buffer, at: number): AacConfig | undefined {
  if (b.length < at + 2) return undefined;
  let ot = b[at] >> 3;
  const freqIndex = ((b[at] & 7) << 1) | (b[at + 1] >> 7);
  const channels = (b[at + 1] >> 3) & 15;
  if (ot === 5 || ot === 29) ot = 2;
  if (ot < 1 || ot > 4 || freqIndex > 12 || channels < 1 || channels > 7) return undefined;
  return { profile: ot - 1, freqIndex, channels };
}

/** The 2-byte AudioSpecificConfig for an ADTS configuration. */
export function buildAsc(c: AacConfig): Buffer {
  const ot = c.profile + 1;
  return Buffer.from([(ot << 3) | (c.freqIndex >> 1), ((c.freqIndex & 1) << 7) | (c.channels << 3)]);
}

/** Writes a 7-byte ADTS header (no CRC) for a frame of `frameLength` bytes, header included. */
export function writeAdts(out: Buffer, at: number, c: AacConfig, frameLength: number): void {
  out[at] = 0xff;
  out[at + 1] = 0xf1;
  out[at + 2] = (c.profile << 6) | (c.freqIndex << 2) | (c.channels >> 2);
  out[at + 3] = ((c.channels & 3) << 6) | ((frameLength >> 11) & 3);
  out[at + 4] = (frameLength >> 3) & 0xff;
  out[at + 5] = ((frameLength & 7) << 5) | 0x1f;
  out[at + 6] = 0xfc;
}

export function sameAac(a: AacConfig | undefined, b: AacConfig): boolean {
  return a !== undefined && a.profile === b.profile && a.freqIndex === b.freqIndex && a.channels === b.channels;
}
