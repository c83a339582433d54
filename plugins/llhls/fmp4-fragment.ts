/*
 * The movie fragment writer (ISO/IEC 14496-12 8.8): one moof (mfhd, then a traf per track with
 * tfhd default-base-is-moof, a version 1 tfdt and a version 1 trun of per-sample duration, size,
 * flags and, for video, composition offset) followed by one mdat holding the tracks' samples in
 * the order of the trafs. Written in place into one Buffer.
 */
import type { Fmp4Track } from './fmp4-track.ts';

/**
 * One sample: its bytes (`body` from `start` on: the FLV tag body, not copied until the fragment is
 * written), decode time and duration in the track's timescale, composition offset.
 */
export interface Fmp4Sample {
  body: Buffer;
  start: number;
  dts: number;
  duration: number;
  /** Composition time offset (PTS - DTS) in the track's timescale; 0 for audio. */
  cto: number;
  sync: boolean;
}

/** The samples of one track in a fragment (at least one). */
export interface Fmp4Run { track: Fmp4Track; samples: Fmp4Sample[] }

/** sample_depends_on 2 (an I picture: depends on no other). */
const FLAGS_SYNC = 0x02000000;
/** sample_depends_on 1 and sample_is_non_sync_sample. */
const FLAGS_NON_SYNC = 0x01010000;
/** trun flags: data-offset, sample duration, size and flags present (+ composition offsets for video). */
const TRUN_AUDIO = 0x000701;
const TRUN_VIDEO = 0x000f01;
/** tfhd flags: default-base-is-moof. */
const TFHD_BASE_IS_MOOF = 0x020000;

const sampleBytes = (r: Fmp4Run): number => (r.track.kind === 'video' ? 16 : 12);
// traf header (8) + tfhd (16) + tfdt v1 (20) + trun head (20: header 12, count 4, data offset 4)
const trafSize = (r: Fmp4Run): number => 8 + 16 + 20 + 20 + r.samples.length * sampleBytes(r);

class Writer {
  at = 0;
  readonly b: Buffer;
  constructor(b: Buffer) { this.b = b; }
  u32(v: number): this { this.b.writeUInt32BE(v >>> 0, this.at); this.at += 4; return this; }
  i32(v: number): this { this.b.writeInt32BE(v, this.at); this.at += 4; return this; }
  /** A non-negative integer below 2^53 as 64 bits (two words: no BigInt per fragment). */
  u64(v: number): this { return this.u32(Math.floor(v / 0x100000000)).u32(v % 0x100000000); }
  head(size: number, type: string): this { this.u32(size); this.b.write(type, this.at, 4, 'latin1'); this.at += 4; return this; }
  full(size: number, type: string, version: number, flags: number): this { return this.head(size, type).u32((version << 24) | flags); }
}

function writeTraf(w: Writer, r: Fmp4Run, dataOffset: number): void {
  const video = r.track.kind === 'video';
  w.head(trafSize(r), 'traf');
  w.full(16, 'tfhd', 0, TFHD_BASE_IS_MOOF).u32(r.track.id);
  w.full(20, 'tfdt', 1, 0).u64(r.samples[0]!.dts);
  w.full(20 + r.samples.length * sampleBytes(r), 'trun', 1, video ? TRUN_VIDEO : TRUN_AUDIO);
  w.u32(r.samples.length).u32(dataOffset);
  for (const s of r.samples) {
    w.u32(s.duration).u32(s.body.length - s.start).u32(s.sync ? FLAGS_SYNC : FLAGS_NON_SYNC);
    if (video) w.i32(s.cto);
  }
}

/**
 * moof + mdat of `runs` (each with at least one sample), fragment sequence number `sequence`,
 * written into a Buffer of exactly its size from `alloc` (a fresh one by default).
 */
export function writeFragment(sequence: number, runs: readonly Fmp4Run[], alloc: (size: number) => Buffer = Buffer.allocUnsafe): Buffer {
  let moofSize = 8 + 16;
  let mdatSize = 8;
  for (const r of runs) {
    moofSize += trafSize(r);
    for (const s of r.samples) mdatSize += s.body.length - s.start;
  }
  const w = new Writer(alloc(moofSize + mdatSize));
  w.head(moofSize, 'moof');
  w.full(16, 'mfhd', 0, 0).u32(sequence);
  let dataOffset = moofSize + 8;
  for (const r of runs) {
    writeTraf(w, r, dataOffset);
    for (const s of r.samples) dataOffset += s.body.length - s.start;
  }
  w.head(mdatSize, 'mdat');
  for (const r of runs) {
    for (const s of r.samples) w.at += s.body.copy(w.b, w.at, s.start);
  }
  return w.b;
}
