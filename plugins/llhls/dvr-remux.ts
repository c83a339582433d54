/*
 * A recorded MPEG-TS segment as CMAF (issue 47.4), pure: the DVR playlist names the recording's
 * segments in the packager's format, so a player crosses from the past into the packager's live
 * edge with the same track layout (one init, H.264 track 1 and AAC track 2: what the packager's
 * muxer writes), not from MPEG-TS into fMP4 (hls.js transmuxes TS into other buffers than an fMP4
 * init makes, and fails where the formats meet; ffmpeg stops there).
 *
 * The segment's frames keep the TS clock (`TsToFlv` with origin 0), so segments remuxed one by one
 * line up: each fragment's decode time is its first frame's. One fragment per segment; the init
 * is the one of the segment's first headers of each track, or of its last when they change inside
 * it (the samples before the change are left out: a rare case, where the publisher changed).
 */
import { TsToFlv, flvPacketOf } from '../../sdk/index.ts';
import { Fmp4Muxer } from './fmp4.ts';

/** A recorded segment's CMAF: its init section and its one movie fragment. */
export interface RemuxedSegment {
  init: Buffer;
  fragment: Buffer;
}

/** `ts` (one recorded segment, whole) as CMAF; undefined when it holds no frame the muxer takes (or a header it cannot read). */
export function remuxRecorded(ts: Buffer): RemuxedSegment | undefined {
  const remux = new TsToFlv({ origin: 0 });
  const tags = remux.push(ts);
  for (const t of remux.flush()) tags.push(t);
  const packets = tags.map(flvPacketOf);
  const muxer = new Fmp4Muxer();
  try {
    // both tracks' headers first: the TS remux sends audio's after the first video frame, and a
    // track added once samples were taken would make a new init without them
    for (const kind of ['video-header', 'audio-header'] as const) {
      const h = packets.find((p) => p.kind === kind);
      if (h) muxer.push(h);
    }
    for (const p of packets) muxer.push(p);
  } catch {
    return undefined;
  }
  const init = muxer.init();
  const last = muxer.end();
  return init && last ? { init, fragment: last.data } : undefined;
}
