/*
 * The little of MPEG-TS the relay needs (pure): the tracks from PAT/PMT for the listing, and
 * where a subscriber may start (a video random access point) so its decoder gets no half GOP.
 */

export const TS_PACKET = 188;

export interface TsTrack {
  pid: number;
  streamType: number;
  codec: string;
}

const CODECS: Record<number, string> = {
  0x01: 'mpeg1video', 0x02: 'mpeg2video', 0x03: 'mp2', 0x04: 'mp2', 0x0f: 'aac', 0x11: 'aac_latm',
  0x1b: 'h264', 0x24: 'hevc', 0x81: 'ac3', 0x87: 'eac3', 0x06: 'private',
};
const VIDEO = new Set([0x01, 0x02, 0x1b, 0x24]);

export function isVideo(t: TsTrack): boolean {
  return VIDEO.has(t.streamType);
}

function pidOf(p: Buffer, o: number): number {
  return ((p[o + 1]! & 0x1f) << 8) | p[o + 2]!;
}

/** Offset of the payload of the TS packet at `o`, or -1 when it has none. */
function payloadAt(p: Buffer, o: number): number {
  const afc = (p[o + 3]! >> 4) & 0x3;
  if (afc === 1) return o + 4;
  if (afc === 3) return o + 5 + p[o + 4]!;
  return -1;
}

/** The PMT PIDs a PAT packet lists (program number 0, the network PID, is skipped). */
export function parsePat(p: Buffer, o: number): number[] {
  let at = payloadAt(p, o);
  if (at < 0) return [];
  at += 1 + p[at]!; // pointer field
  const len = ((p[at + 1]! & 0x0f) << 8) | p[at + 2]!;
  const end = Math.min(at + 3 + len - 4, o + TS_PACKET);
  const pids: number[] = [];
  for (let i = at + 8; i + 4 <= end; i += 4) {
    const program = (p[i]! << 8) | p[i + 1]!;
    if (program !== 0) pids.push(((p[i + 2]! & 0x1f) << 8) | p[i + 3]!);
  }
  return pids;
}

/** The elementary streams of a PMT packet (single-packet sections, which ffmpeg writes). */
export function parsePmt(p: Buffer, o: number): TsTrack[] {
  let at = payloadAt(p, o);
  if (at < 0) return [];
  at += 1 + p[at]!;
  const len = ((p[at + 1]! & 0x0f) << 8) | p[at + 2]!;
  const end = Math.min(at + 3 + len - 4, o + TS_PACKET);
  const infoLen = ((p[at + 10]! & 0x0f) << 8) | p[at + 11]!;
  const tracks: TsTrack[] = [];
  for (let i = at + 12 + infoLen; i + 5 <= end;) {
    const streamType = p[i]!;
    const pid = ((p[i + 1]! & 0x1f) << 8) | p[i + 2]!;
    tracks.push({ pid, streamType, codec: CODECS[streamType] ?? `0x${streamType.toString(16)}` });
    i += 5 + (((p[i + 3]! & 0x0f) << 8) | p[i + 4]!);
  }
  return tracks;
}

/** True when the packet at `o` starts a random access point (adaptation field flag). */
export function isRandomAccess(p: Buffer, o: number): boolean {
  const afc = (p[o + 3]! >> 4) & 0x3;
  return (afc & 0x2) !== 0 && p[o + 4]! > 0 && (p[o + 5]! & 0x40) !== 0;
}

export { pidOf };
