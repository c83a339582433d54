/*
 * The little of MPEG-TS the stream table needs: the PMT PIDs of a PAT, the video PIDs of a PMT, and
 * whether a packet starts a random access point, so a late reader's decoder gets no half GOP. The
 * packet fields are the SDK's (sdk/mpegts.ts, shared with the recorder and the playout relay).
 */
import { tsPmt } from '../../sdk/index.ts';

export { TS_PACKET, tsPid as pidOf, tsPat as parsePat, tsRandomAccess as isRandomAccess } from '../../sdk/index.ts';

/** Video stream types the table starts late readers on: MPEG-1/2 video, H.264, HEVC. */
const VIDEO = new Set([0x01, 0x02, 0x1b, 0x24]);

/** The elementary streams of a PMT packet: PID and stream type ([] for another packet). */
export function parsePmt(p: Buffer, o: number): Array<{ pid: number; streamType: number }> {
  return tsPmt(p, o)?.streams.map(({ pid, streamType }) => ({ pid, streamType })) ?? [];
}

export function isVideoType(streamType: number): boolean {
  return VIDEO.has(streamType);
}

/** Audio stream types (`StreamInfo.media`): MPEG-1/2 audio, AAC (ADTS, LATM), AC-3. */
const AUDIO = new Set([0x03, 0x04, 0x0f, 0x11, 0x81]);

export function isAudioType(streamType: number): boolean {
  return AUDIO.has(streamType);
}
