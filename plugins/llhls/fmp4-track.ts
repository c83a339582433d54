/*
 * The tracks of the fMP4 muxer, read from the stream table's sequence headers (FLV video and audio
 * header packets); a header that does not parse is an `Fmp4Error` (errors.ts).
 */
import { AAC_RATES, avcSize, parseAsc, parseAvcConfig, type FlvPacket } from '../../sdk/index.ts';
import { Fmp4Error } from './errors.ts';

/** FLV codec ids the muxer takes. */
export const FLV_H264 = 7;
export const FLV_AAC = 10;

interface TrackBase {
  /** track_ID in the init segment and the fragments: 1 for video, 2 for audio. */
  id: number;
  /** Ticks per second of the track's decode times: 90000 for video, the sample rate for audio. */
  timescale: number;
  /** The codec configuration record as the sample entry carries it (avcC, or the esds's ASC). */
  config: Buffer;
  /** RFC 6381 codec string for the playlist's CODECS (`avc1.64001f`, `mp4a.40.2`). */
  codec: string;
}

/** An H.264 track. */
export interface Fmp4VideoTrack extends TrackBase { kind: 'video'; width: number; height: number }
/** An AAC track. */
export interface Fmp4AudioTrack extends TrackBase { kind: 'audio'; channels: number; sampleRate: number }
/** A track of the init segment. */
export type Fmp4Track = Fmp4VideoTrack | Fmp4AudioTrack;

export const VIDEO_ID = 1;
export const AUDIO_ID = 2;

/** The H.264 track of an FLV video sequence header; throws an `Fmp4Error` when it is not one. */
export function videoTrack(p: FlvPacket): Fmp4VideoTrack {
  const b = p.body;
  if ((b.length > 0 && (b[0]! & 0x80) !== 0) || p.codec !== FLV_H264) {
    throw new Fmp4Error('LLHLS_UNSUPPORTED_CODEC', `video codec ${p.codec} is not packaged (H.264 only)`);
  }
  const avc = b.length > 5 ? parseAvcConfig(b, 5) : undefined;
  const size = avc && avcSize(avc.sps[0]!);
  if (!avc || !size || size.width === 0 || size.height === 0) {
    throw new Fmp4Error('LLHLS_BAD_AVC_CONFIG', 'the video sequence header is not a valid AVCDecoderConfigurationRecord');
  }
  const config = Buffer.from(b.subarray(5));
  const codec = `avc1.${config.subarray(1, 4).toString('hex')}`;
  return { kind: 'video', id: VIDEO_ID, timescale: 90000, config, codec, width: size.width, height: size.height };
}

/** The AAC track of an FLV audio sequence header; throws an `Fmp4Error` when it is not one. */
export function audioTrack(p: FlvPacket): Fmp4AudioTrack {
  const b = p.body;
  if (p.codec !== FLV_AAC) throw new Fmp4Error('LLHLS_UNSUPPORTED_CODEC', `audio codec ${p.codec} is not packaged (AAC only)`);
  const asc = b.length >= 4 ? parseAsc(b, 2) : undefined;
  if (!asc) throw new Fmp4Error('LLHLS_BAD_AAC_CONFIG', 'the audio sequence header is not a valid AudioSpecificConfig');
  const config = Buffer.from(b.subarray(2));
  const sampleRate = AAC_RATES[asc.freqIndex]!;
  const codec = `mp4a.40.${config[0]! >> 3}`;
  return { kind: 'audio', id: AUDIO_ID, timescale: sampleRate, config, codec, channels: asc.channels, sampleRate };
}

/** Whether two tracks have the same configuration (a repeated sequence header changes nothing). */
export function sameTrack(a: Fmp4Track | undefined, b: Fmp4Track): boolean {
  return a !== undefined && a.kind === b.kind && a.config.equals(b.config);
}
