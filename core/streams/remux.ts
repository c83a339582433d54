import { flvPacketOf, type FlvPacket } from '../../sdk/index.ts';
import type { ConverterRegistry, StreamConverter } from './converters.ts';
import { FlvToTs, TsToFlv } from './remux/index.ts';

const NONE: readonly Buffer[] = [];

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
    push: (chunk: Buffer): FlvPacket[] => remux.push(chunk).map(flvPacketOf),
  };
}

/** The converters the app's stream table uses: the remux of core/streams/remux (no ffmpeg). */
export function converterRegistry(): ConverterRegistry {
  return { 'flv->mpegts': flvToMpegts, 'mpegts->flv': mpegtsToFlv };
}
