/*
 * The CMAF / fragmented MP4 muxer of the LL-HLS packager: the stream table's FLV packets of one
 * stream in, an init segment and movie fragments out. Pure (no I/O, no timers). See README.md.
 *
 * - `initSegment(tracks)`: ftyp (iso6, cmfc) + moov; `Fmp4Muxer.init()` the one of its tracks.
 * - `Fmp4Muxer.push(packet)`: sequence headers set the tracks (H.264 track 1 at 90 kHz, AAC track 2
 *   at its sample rate); frames become samples. Video frames before the first keyframe (after each
 *   video header) are dropped, so every fragment's video starts decodable from a keyframe.
 * - Durations: a sample's duration is the next sample's DTS minus its own, so the last sample of
 *   each track is held back until the next one of that track arrives (or `end()`): `flush()`
 *   cuts every sample but those. To cut a segment at a keyframe, push the keyframe, then flush:
 *   the keyframe is held and starts the next fragment. Each track's timeline has no gaps:
 *   fragment n+1's tfdt is fragment n's tfdt plus its durations. `flush(cutMs)` also lets go of a
 *   held AAC frame that starts before the cut (its duration is a frame's), so audio reaches the cut.
 * - Audio decode times run at 1024 samples per AAC frame from the first frame; when the FLV
 *   timestamp drifts more than half a frame from that clock (a gap, a jump) the clock follows it.
 * - A sequence header that changes a track, or adds one, once samples were taken is a new init:
 *   `push` answers `{ kind: 'new-init', last }` (`last`: the fragment of every sample taken so
 *   far under the old init, the held ones with their previous duration), and `init()` then gives
 *   the new one. A header that does not parse throws an `Fmp4Error` with a stable code.
 * - Timestamps are the FLV ones (ms, 32-bit, not unwrapped: a stream of 49 days wraps).
 */
import type { FlvPacket } from '../../sdk/index.ts';
import { writeInit } from './fmp4-boxes.ts';
import { writeFragment, type Fmp4Run, type Fmp4Sample } from './fmp4-fragment.ts';
import { FLV_AAC, audioTrack, sameTrack, videoTrack, type Fmp4Track } from './fmp4-track.ts';

export { Fmp4Error, type Fmp4ErrorCode } from './errors.ts';
export type { Fmp4Track, Fmp4VideoTrack, Fmp4AudioTrack } from './fmp4-track.ts';

/** What a push did. */
export type Fmp4PushResult =
  | { kind: 'sample' | 'header' | 'ignored' }
  | { kind: 'new-init'; last: Fmp4Fragment | undefined };

/** A movie fragment (moof + mdat) and what a playlist says of it. */
export interface Fmp4Fragment {
  data: Buffer;
  /** The mfhd sequence number (1, 2, ... per muxer). */
  sequence: number;
  /** Decode time of its first sample in seconds (video's when it has video, else audio's). */
  start: number;
  /** Its duration in seconds (the same track's sample durations). */
  duration: number;
  /** Its video starts with a keyframe, or the stream has no video: it decodes without earlier fragments. */
  independent: boolean;
}

const AAC_FRAME = 1024;
const EMPTY = Buffer.alloc(0);
const SAMPLE: Fmp4PushResult = { kind: 'sample' };
const HEADER: Fmp4PushResult = { kind: 'header' };
const IGNORED: Fmp4PushResult = { kind: 'ignored' };

interface TrackState {
  track: Fmp4Track;
  ready: Fmp4Sample[];
  held: Fmp4Sample | undefined;
  lastDuration: number;
  /** Audio: the decode time the next frame continues at after a held frame was let go at a cut. */
  next?: number;
}

/** The init segment (ftyp + moov) of `tracks`. */
export function initSegment(tracks: readonly Fmp4Track[]): Buffer {
  return writeInit(tracks);
}

/** Packages one stream's FLV packets as fMP4 (see the file's head for the rules). */
export class Fmp4Muxer {
  private video: TrackState | undefined;
  private audio: TrackState | undefined;
  private sequence = 0;
  private taken = false;
  private waitKey = true;
  readonly #alloc: ((size: number) => Buffer) | undefined;
  /** Samples written out, for the next frames (a stream's packets make no object each that would outlive a part). */
  #free: Fmp4Sample[] = [];

  /** `alloc`: where fragments are written (a Buffer of exactly the size asked; a fresh one by default). */
  constructor(alloc?: (size: number) => Buffer) {
    this.#alloc = alloc;
  }

  /** The stream has a video track (it drives the cuts). */
  get hasVideo(): boolean {
    return this.video !== undefined;
  }

  /** The current tracks, video first. */
  tracks(): Fmp4Track[] {
    return [this.video, this.audio].flatMap((s) => (s ? [s.track] : []));
  }

  /** The init segment of the current tracks (undefined before the first sequence header). */
  init(): Buffer | undefined {
    const tracks = this.tracks();
    return tracks.length > 0 ? initSegment(tracks) : undefined;
  }

  push(p: FlvPacket): Fmp4PushResult {
    if (p.kind === 'video-header') return this.header(videoTrack(p));
    if (p.kind === 'audio-header') return this.header(audioTrack(p));
    if (p.type === 9) return this.videoFrame(p);
    if (p.type === 8) return this.audioFrame(p);
    return IGNORED;
  }

  /**
   * A fragment of every sample whose duration is known; undefined when there is none. With
   * `cutMs` (the FLV time of the video frame the cut is before), an AAC frame held back that
   * starts before it goes too, with a frame's duration: the fragment's audio then reaches the cut as its
   * video does (a player's buffer holds the whole segment, not up to a frame less).
   */
  flush(cutMs?: number): Fmp4Fragment | undefined {
    const a = this.audio;
    if (cutMs !== undefined && this.video && a?.held && a.held.dts < Math.round((cutMs * a.track.timescale) / 1000)) {
      a.next = a.held.dts + AAC_FRAME;
      a.held.duration = AAC_FRAME;
      a.ready.push(a.held);
      a.held = undefined;
    }
    const runs: Fmp4Run[] = [];
    for (const s of [this.video, this.audio]) {
      if (s && s.ready.length > 0) runs.push({ track: s.track, samples: s.ready });
    }
    if (runs.length === 0) return undefined;
    const main = runs[0]!;
    const scale = main.track.timescale;
    let ticks = 0;
    for (const s of main.samples) ticks += s.duration;
    const first = this.video?.ready[0];
    const fragment: Fmp4Fragment = {
      data: writeFragment(++this.sequence, runs, this.#alloc),
      sequence: this.sequence,
      start: main.samples[0]!.dts / scale,
      duration: ticks / scale,
      independent: this.video === undefined || first?.sync === true,
    };
    for (const s of [this.video, this.audio]) {
      if (!s) continue;
      // written: the samples go back to the pool without their bodies, the array is kept
      for (const x of s.ready) {
        x.body = EMPTY;
        this.#free.push(x);
      }
      s.ready.length = 0;
    }
    return fragment;
  }

  /** The end of the stream: the held samples get their previous duration; the last fragment. */
  end(): Fmp4Fragment | undefined {
    for (const s of [this.video, this.audio]) if (s) release(s);
    return this.flush();
  }

  private header(track: Fmp4Track): Fmp4PushResult {
    const state = track.kind === 'video' ? this.video : this.audio;
    if (sameTrack(state?.track, track)) return IGNORED;
    const fresh: TrackState = { track, ready: [], held: undefined, lastDuration: 0 };
    if (track.kind === 'video') this.waitKey = true;
    if (!this.taken) {
      if (track.kind === 'video') this.video = fresh;
      else this.audio = fresh;
      return HEADER;
    }
    const last = this.end();
    if (track.kind === 'video') this.video = fresh;
    else this.audio = fresh;
    this.taken = false;
    return { kind: 'new-init', last };
  }

  private videoFrame(p: FlvPacket): Fmp4PushResult {
    const s = this.video;
    const b = p.body;
    if (!s || b.length < 6 || b[1] !== 1 || (b[0]! & 0x80) !== 0) return IGNORED;
    const sync = p.kind === 'keyframe';
    if (this.waitKey && !sync) return IGNORED;
    this.waitKey = false;
    const dts = p.timestamp * 90;
    add(s, this.#sample(b, 5, dts, b.readIntBE(2, 3) * 90, sync));
    this.taken = true;
    return SAMPLE;
  }

  #sample(body: Buffer, start: number, dts: number, cto: number, sync: boolean): Fmp4Sample {
    const x = this.#free.pop();
    if (!x) return { body, start, dts, duration: 0, cto, sync };
    x.body = body;
    x.start = start;
    x.dts = dts;
    x.duration = 0;
    x.cto = cto;
    x.sync = sync;
    return x;
  }

  private audioFrame(p: FlvPacket): Fmp4PushResult {
    const s = this.audio;
    const b = p.body;
    if (!s || p.codec !== FLV_AAC || b.length < 3 || b[1] !== 1) return IGNORED;
    const rate = s.track.timescale;
    const stamp = Math.round((p.timestamp * rate) / 1000);
    const expected = s.held ? s.held.dts + AAC_FRAME : s.next ?? stamp;
    s.next = undefined;
    const dts = Math.abs(stamp - expected) <= AAC_FRAME / 2 ? expected : stamp;
    add(s, this.#sample(b, 2, dts, 0, true));
    this.taken = true;
    return SAMPLE;
  }
}

/** Takes `sample` into its track: the held one gets its duration and is ready; `sample` is held. */
function add(s: TrackState, sample: Fmp4Sample): void {
  const held = s.held;
  if (held) {
    if (sample.dts <= held.dts) sample.dts = held.dts + 1;
    held.duration = sample.dts - held.dts;
    s.lastDuration = held.duration;
    s.ready.push(held);
  }
  s.held = sample;
}

/** Makes the held sample ready with the previous duration (a frame's worth when it is the only one). */
function release(s: TrackState): void {
  const held = s.held;
  if (!held) return;
  held.duration = s.lastDuration || (s.track.kind === 'audio' ? AAC_FRAME : 3000);
  s.ready.push(held);
  s.held = undefined;
}
