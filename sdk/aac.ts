/*
 * AAC (ISO/IEC 14496-3) helpers: the AudioSpecificConfig that FLV and MP4 carry as the audio
 * sequence header, and ADTS headers. Pure functions, used by the core's FLV <-> MPEG-TS remux and
 * by packagers of the stream table's packets.
 */

/** The fields of an AudioSpecificConfig that ADTS can carry. */
export interface AacConfig {
  /** ADTS profile: audio object type - 1 (0 Main, 1 LC, 2 SSR, 3 LTP). */
  profile: number;
  freqIndex: number;
  channels: number;
}

/**
 * The sampling frequencies by sampling_frequency_index (0..12).
 *
 * @example
 * const rate = AAC_RATES[asc.freqIndex]!; // 44100 for index 4
 */
export const AAC_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/**
 * Reads the fields ADTS can carry from an AudioSpecificConfig at b[at..]. HE-AAC (object type 5 or
 * 29, explicit SBR/PS) is carried as its core (LC at the core rate: decoders find SBR implicitly);
 * escaped object types, an explicit frequency and channel configuration 0 are refused (undefined).
 *
 * @example
 * const asc = parseAsc(tag.body, 2); // an FLV AAC sequence header: 2 bytes before the config
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

/**
 * The 2-byte AudioSpecificConfig for an ADTS configuration.
 *
 * @example
 * buildAsc({ profile: 1, freqIndex: 4, channels: 2 }); // <Buffer 12 10>
 */
export function buildAsc(c: AacConfig): Buffer {
  const ot = c.profile + 1;
  return Buffer.from([(ot << 3) | (c.freqIndex >> 1), ((c.freqIndex & 1) << 7) | (c.channels << 3)]);
}

/**
 * Writes a 7-byte ADTS header (no CRC) for a frame of `frameLength` bytes, header included.
 *
 * @example
 * writeAdts(out, 0, asc, 7 + raw.length);
 */
export function writeAdts(out: Buffer, at: number, c: AacConfig, frameLength: number): void {
  out[at] = 0xff;
  out[at + 1] = 0xf1;
  out[at + 2] = (c.profile << 6) | (c.freqIndex << 2) | (c.channels >> 2);
  out[at + 3] = ((c.channels & 3) << 6) | ((frameLength >> 11) & 3);
  out[at + 4] = (frameLength >> 3) & 0xff;
  out[at + 5] = ((frameLength & 7) << 5) | 0x1f;
  out[at + 6] = 0xfc;
}

/**
 * Whether `a` is the same ADTS configuration as `b` (false when `a` is undefined).
 *
 * @example
 * if (!sameAac(current, next)) emitHeader(next);
 */
export function sameAac(a: AacConfig | undefined, b: AacConfig): boolean {
  return a !== undefined && a.profile === b.profile && a.freqIndex === b.freqIndex && a.channels === b.channels;
}
