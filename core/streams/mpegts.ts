/*
 * The little of MPEG-TS the stream table needs (pure): the PMT PIDs of a PAT, the video PIDs of a
 * PMT, and whether a packet starts a random access point, so a late reader's decoder gets no half GOP.
 */

export const TS_PACKET = 188;

/** Video stream types: MPEG-1/2 video, H.264, HEVC. */
const VIDEO = new Set([0x01, 0x02, 0x1b, 0x24]);

export function pidOf(p: Buffer, o: number): number {
  return ((p[o + 1]! & 0x1f) << 8) | p[o + 2]!;
}

/** Offset of the payload of the TS packet at `o`, or -1 when it has none. */
function payloadAt(p: Buffer, o: number): number {
  const afc = (p[o + 3]! >> 4) & 0x3;
  if (afc === 1) return o + 4;
  if (afc === 3) return o + 5 + p[o + 4]!;
  return -1;
}

/** Start and end of the section in the packet at `o` (single-packet sections, as ffmpeg writes them). */
function section(p: Buffer, o: number): { at: number; end: number } | undefined {
  let at = payloadAt(p, o);
  if (at < 0 || at >= o + TS_PACKET) return undefined;
  at += 1 + p[at]!; // pointer field
  if (at + 3 > o + TS_PACKET) return undefined;
  const len = ((p[at + 1]! & 0x0f) << 8) | p[at + 2]!;
  return { at, end: Math.min(at + 3 + len - 4, o + TS_PACKET) };
}

/** The PMT PIDs a PAT packet lists (program number 0, the network PID, is skipped). */
export function parsePat(p: Buffer, o: number): number[] {
  const s = section(p, o);
  if (!s) return [];
  const pids: number[] = [];
  for (let i = s.at + 8; i + 4 <= s.end; i += 4) {
    const program = (p[i]! << 8) | p[i + 1]!;
    if (program !== 0) pids.push(((p[i + 2]! & 0x1f) << 8) | p[i + 3]!);
  }
  return pids;
}

/** The elementary streams of a PMT packet: PID and stream type. */
export function parsePmt(p: Buffer, o: number): Array<{ pid: number; streamType: number }> {
  const s = section(p, o);
  if (!s || s.at + 12 > s.end) return [];
  const infoLen = ((p[s.at + 10]! & 0x0f) << 8) | p[s.at + 11]!;
  const tracks: Array<{ pid: number; streamType: number }> = [];
  for (let i = s.at + 12 + infoLen; i + 5 <= s.end;) {
    tracks.push({ pid: ((p[i + 1]! & 0x1f) << 8) | p[i + 2]!, streamType: p[i]! });
    i += 5 + (((p[i + 3]! & 0x0f) << 8) | p[i + 4]!);
  }
  return tracks;
}

export function isVideoType(streamType: number): boolean {
  return VIDEO.has(streamType);
}

/** True when the packet at `o` starts a random access point (adaptation field flag). */
export function isRandomAccess(p: Buffer, o: number): boolean {
  const afc = (p[o + 3]! >> 4) & 0x3;
  return (afc & 0x2) !== 0 && p[o + 4]! > 0 && (p[o + 5]! & 0x40) !== 0;
}
