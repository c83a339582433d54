import type { FilesystemService } from '../../sdk/index.ts';
import { TS_PACKET as TS, TS_SYNC as SYNC, tsPesStamps, tsPid, tsPmt, tsPrimary, tsPat, tsRandomAccess, tsUnitStart, tsUnwrap, type TsStream } from '../../sdk/index.ts';
import type { Segment } from './segments.ts';

/*
 * A cut of a recording as MPEG-TS bytes, without decoding: the segments that cover the range,
 * read one at a time, the first from the last keyframe at or before `start` (with its PAT and PMT
 * in front), the last up to the first primary frame at or after the end.
 */

/** A frame start of the primary stream in a segment: byte offset, wall-clock ms, keyframe or not. */
interface Frame { at: number; wall: number; key: boolean }

/** The PSI packets at the head of a segment and its primary frame starts. */
export function scanSegment(buf: Buffer, segStart: number): { head: Buffer[]; frames: Frame[] } {
  const head: Buffer[] = [];
  const frames: Frame[] = [];
  let pmtPid = -1;
  let primary: TsStream | undefined;
  let first: number | undefined;
  let last = 0;
  for (let o = 0; o + TS <= buf.length; o += TS) {
    if (buf[o] !== SYNC) continue;
    const pid = tsPid(buf, o);
    if (pid === 0 || pid === pmtPid) {
      if (pid === 0) pmtPid = tsPat(buf, o)[0] ?? pmtPid;
      else primary = tsPrimary(tsPmt(buf, o)?.streams ?? []) ?? primary;
      if (frames.length === 0) head.push(buf.subarray(o, o + TS));
      continue;
    }
    if (pid !== primary?.pid || !tsUnitStart(buf, o)) continue;
    const raw = (tsPesStamps(buf, o)?.pts ?? -1);
    if (raw < 0) continue;
    const pts = first === undefined ? raw : tsUnwrap(raw, last);
    first ??= pts;
    last = pts;
    frames.push({ at: o, wall: segStart + (pts - first) / 90, key: primary.kind !== 'video' || tsRandomAccess(buf, o) });
  }
  return { head, frames };
}

/** Where the cut starts in the first segment: the last keyframe at or before `start` (else the first keyframe). */
export function cutStart(frames: readonly Frame[], start: number): Frame | undefined {
  let pick: Frame | undefined;
  for (const f of frames) {
    if (!f.key) continue;
    if (f.wall <= start || !pick) pick = f;
    if (f.wall > start) break;
  }
  return pick;
}

/** Offset where the cut ends in a segment: the first frame at or after `end`; undefined when the segment ends before. */
export function cutEnd(frames: readonly Frame[], end: number, after = 0): number | undefined {
  return frames.find((f) => f.at > after && f.wall >= end)?.at;
}

export interface TsCut {
  /** Wall-clock ms of the first frame of the cut. */
  start: number;
  /** It carries AAC in ADTS (an MP4 needs it as raw AAC: `aac_adtstoasc`). */
  aac: boolean;
  /** The bytes, segment by segment. */
  body: AsyncGenerator<Buffer>;
}

async function read(fs: FilesystemService, file: string): Promise<Buffer> {
  const b = await fs.readFile(file);
  if (!b) throw new Error(`segment ${file} is missing`);
  return b;
}

/** The cut of `[start, end)` over `segs` (from `SegmentIndex.covering`); undefined when the first segment has no keyframe. */
export async function tsCut(fs: FilesystemService, segs: readonly Segment[], start: number, end: number): Promise<TsCut | undefined> {
  const buf = await read(fs, segs[0]!.file);
  const { head, frames } = scanSegment(buf, segs[0]!.start);
  const from = cutStart(frames, start);
  if (!from) return undefined;
  async function* body(): AsyncGenerator<Buffer> {
    const stop = cutEnd(frames, end, from!.at);
    yield Buffer.concat([...head, buf.subarray(from!.at, stop ?? buf.length)]);
    if (stop !== undefined) return;
    for (const s of segs.slice(1)) {
      const next = await read(fs, s.file);
      const to = s.start + s.duration > end ? cutEnd(scanSegment(next, s.start).frames, end) : undefined;
      yield to === undefined ? next : next.subarray(0, to);
      if (to !== undefined) return;
    }
  }
  const aac = head.some((p) => tsPid(p, 0) !== 0 && tsPmt(p)?.streams.some((s) => s.streamType === 0x0f));
  return { start: Math.round(from.wall), aac, body: body() };
}
