import type { FlvPacket } from '../../sdk/index.ts';
import type { ConverterRegistry, StreamConverter } from './converters.ts';
import { FlvToTs, TsToFlv, classifyFlv, type FlvTag } from './remux/index.ts';

const NONE: readonly Buffer[] = [];

/** The codec of a tag as RTMP reports it: the sound format, the video codec id, or an Enhanced RTMP FourCC. */
function codecOf(tag: FlvTag): number {
  const b = tag.body;
  if (tag.type === 18 || b.length === 0) return 0;
  if (tag.type === 8) return b[0]! >> 4;
  return (b[0]! & 0x80) !== 0 && b.length >= 5 ? b.readUInt32BE(1) : b[0]! & 0x0f;
}

/** RTMP's packets as MPEG-TS (one Buffer of whole TS packets per media tag). */
export function flvToMpegts(): StreamConverter<'flv', 'mpegts'> {
  const remux = new FlvToTs();
  return {
    push: (p: FlvPacket) => {
      const out = remux.push(p);
      return out ? [out] : NONE;
    },
  };
}

/** MPEG-TS (SRT, HTTP-TS) as FLV packets, each classified for the FLV view's start rules. */
export function mpegtsToFlv(): StreamConverter<'mpegts', 'flv'> {
  const remux = new TsToFlv();
  return {
    push: (chunk: Buffer) => remux.push(chunk).map((tag): FlvPacket => ({
      kind: classifyFlv(tag), type: tag.type, codec: codecOf(tag), timestamp: tag.timestamp, body: tag.body,
    })),
  };
}

/** The converters the app's stream table uses: the remux of core/streams/remux (no ffmpeg). */
export function converterRegistry(): ConverterRegistry {
  return { 'flv->mpegts': flvToMpegts, 'mpegts->flv': mpegtsToFlv };
}
