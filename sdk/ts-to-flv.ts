/*
 * MPEG-TS to FLV tags (the core's remux for SRT and HTTP-TS ingest; plugins that read recorded TS
 * use it too), and what a tag is: its class and codec as the stream table's `FlvPacket` says them.
 */
import { AAC_RATES, buildAsc, sameAac, type AacConfig } from './aac.ts';
import { NAL_AUD, NAL_IDR, NAL_PPS, NAL_SPS, buildAvcConfig, splitAnnexB } from './h264.ts';
import { TS_WRAP as WRAP33 } from './mpegts.ts';
import type { FlvPacket, FlvPacketKind } from './streams.ts';
import { TsDemux, type TsPesUnit } from './ts-demux.ts';

/** One FLV tag: what RTMP carries as a message (type 8 audio, 9 video, 18 script data). */
export interface FlvTag {
  type: 8 | 9 | 18;
  /** ms, decode time (32-bit) */
  timestamp: number;
  /** FLV tag body (what RTMP carries as the message payload) */
  body: Buffer;
}

/**
 * FLV codec ids of the legacy header nibble: MPEG audio layer III, AAC, H.264.
 *
 * @example
 * if (tag.type === 8 && tag.body[0]! >> 4 === FLV_CODEC.aac) aac(tag);
 */
export const FLV_CODEC = Object.freeze({ mp3: 2, aac: 10, avc: 7 });

/**
 * What a tag is, read from its first bytes (legacy and enhanced-RTMP video headers alike).
 *
 * @example
 * if (classifyFlv(tag) === 'keyframe') startHere(tag);
 */
export function classifyFlv(tag: FlvTag): FlvPacketKind {
  const b = tag.body;
  if (tag.type === 18) return 'metadata';
  if (b.length < 2) return 'frame';
  if (tag.type === 8) return (b[0]! >> 4) === FLV_CODEC.aac && b[1] === 0 ? 'audio-header' : 'frame';
  if ((b[0]! & 0x80) !== 0) {
    // enhanced RTMP: IsExHeader | FrameType(3) | PacketType(4); PacketType 0 is SequenceStart
    if ((b[0]! & 0x0f) === 0) return 'video-header';
    return ((b[0]! >> 4) & 7) === 1 ? 'keyframe' : 'frame';
  }
  if (b[1] === 0 && ((b[0]! & 0x0f) === FLV_CODEC.avc || (b[0]! & 0x0f) === 12)) return 'video-header';
  return (b[0]! >> 4) === 1 && b[1] !== 2 ? 'keyframe' : 'frame';
}

/**
 * A tag as the stream table's packet: its class and its codec as RTMP reports it (the sound
 * format, the video codec id, or an Enhanced RTMP FourCC).
 *
 * @example
 * const packets = remux.push(chunk).map(flvPacketOf);
 */
export function flvPacketOf(tag: FlvTag): FlvPacket {
  const b = tag.body;
  let codec = 0;
  if (tag.type === 8 && b.length > 0) codec = b[0]! >> 4;
  else if (tag.type === 9 && b.length > 0) codec = (b[0]! & 0x80) !== 0 && b.length >= 5 ? b.readUInt32BE(1) : b[0]! & 0x0f;
  return { kind: classifyFlv(tag), type: tag.type, codec, timestamp: tag.timestamp, body: tag.body };
}

const TWO32 = 4294967296;
/**
 * Audio tags held back, at most, while a stream whose PMT lists video has sent no video header yet
 * (a converter made mid-GOP, or audio that completes before the first keyframe): this many tags or
 * this many ms of audio; beyond either they go out and audio leads.
 *
 * @example
 * const full = held.length >= HOLD_TAGS;
 */
export const HOLD_TAGS = 1024;
/**
 * See `HOLD_TAGS`.
 *
 * @example
 * const lead = Math.min(heldMs, HOLD_MS);
 */
export const HOLD_MS = 10_000;

/**
 * MPEG-TS to FLV tags: H.264 (Annex B to AVCC, a video-header tag first and whenever SPS/PPS
 * change), AAC (one tag per ADTS frame after an audio-header tag), MPEG audio layer III (one tag
 * per PES). Timestamps are ms from the first DTS seen (or from `origin`, a 90 kHz time: 0 keeps
 * the TS clock, so pieces of one recording converted apart share a timeline), unwrapped over 33
 * bits, never going backwards per track. Other streams are skipped.
 *
 * @example
 * const remux = new TsToFlv();
 * const tags = [...remux.push(chunk), ...remux.flush()];
 */
export class TsToFlv {
  private readonly demux = new TsDemux((u) => this.pes(u), (dts) => this.start(dts));
  private out: FlvTag[] = [];
  private readonly origin: number | undefined;
  private started = false;
  private base = 0;
  private last33 = -1;
  private ext = 0;
  private lastVideo = 0;
  private lastAudio = 0;
  private sps: Buffer[] = [];
  private pps: Buffer[] = [];
  private headerDue = true;
  /** Audio tags waiting for the first video header (video is the first track a reader sees). */
  private held: FlvTag[] = [];
  /** True until the first video header went out or holding gave up. */
  private holding = true;
  private aac: AacConfig | undefined;
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  constructor(opts: { origin?: number } = {}) {
    this.origin = opts.origin;
  }

  /** The tags of `chunk` (TS packets, split anywhere). */
  push(chunk: Buffer): FlvTag[] {
    this.out = [];
    try { this.demux.push(chunk); } catch { /* a malformed unit is dropped */ }
    return this.out;
  }

  /** The tags of PES still open (call at the end of the input: the last video frame waits for the next PES otherwise). */
  flush(): FlvTag[] {
    this.out = [];
    try { this.demux.flush(); } catch { /* as push */ }
    this.release();
    return this.out;
  }

  /** Bytes of a partial TS packet carried over between pushes (at most 187). */
  get pending(): number { return this.demux.pending; }

  /** Bytes held for PES being assembled (bounded by PES_CAP per stream). */
  get buffered(): number { return this.demux.buffered; }

  private start(dts: number): void {
    if (this.started) return;
    this.started = true;
    this.base = this.origin ?? dts;
    this.last33 = dts;
    this.ext = dts;
  }

  /** The DTS unwrapped over 33 bits (steps of under 2^32 either way). */
  private unwrap(dts: number): number {
    this.start(dts);
    let d = (dts - this.last33 + WRAP33) % WRAP33;
    if (d >= TWO32) d -= WRAP33;
    this.last33 = dts;
    this.ext += d;
    return this.ext;
  }

  private pes(u: TsPesUnit): void {
    const dts = this.unwrap(u.dts);
    let cts = (u.pts - u.dts + WRAP33) % WRAP33;
    if (cts >= TWO32) cts -= WRAP33;
    if (u.kind === 'h264') this.video(u, dts, cts);
    else if (u.kind === 'aac') this.aacFrames(u, dts);
    else this.mp3(u, dts);
  }

  private ms(ticks: number, video: boolean): number {
    let ms = Math.max(0, Math.round((ticks - this.base) / 90));
    if (video) { ms = Math.max(ms, this.lastVideo); this.lastVideo = ms; }
    else { ms = Math.max(ms, this.lastAudio); this.lastAudio = ms; }
    return ms % TWO32;
  }

  private video(u: TsPesUnit, dts: number, cts: number): void {
    const b = u.data;
    const n = splitAnnexB(b, u.start, u.end, this.starts, this.ends);
    let idr = false;
    let size = 5;
    let sps: Buffer[] | undefined;
    let pps: Buffer[] | undefined;
    for (let i = 0; i < n; i++) {
      const s = this.starts[i];
      const t = b[s] & 0x1f;
      if (t === NAL_SPS) (sps ??= []).push(b.subarray(s, this.ends[i]));
      else if (t === NAL_PPS) (pps ??= []).push(b.subarray(s, this.ends[i]));
      else if (t !== NAL_AUD) { size += 4 + this.ends[i] - s; if (t === NAL_IDR) idr = true; }
    }
    if (sps && !sameList(sps, this.sps)) { this.sps = sps.map((x) => Buffer.from(x)); this.headerDue = true; }
    if (pps && !sameList(pps, this.pps)) { this.pps = pps.map((x) => Buffer.from(x)); this.headerDue = true; }
    if (this.sps.length === 0 || this.pps.length === 0 || size === 5) return;
    const ms = this.ms(dts, true);
    if (this.headerDue) {
      const cfg = buildAvcConfig(this.sps.slice(0, 31), this.pps.slice(0, 255));
      const body = Buffer.allocUnsafe(5 + cfg.length);
      body.set([0x17, 0, 0, 0, 0]);
      body.set(cfg, 5);
      this.out.push({ type: 9, timestamp: ms, body });
      this.headerDue = false;
      this.release();
    }
    const body = Buffer.allocUnsafe(size);
    body[0] = idr ? 0x17 : 0x27;
    body[1] = 1;
    body.writeIntBE(Math.max(-0x800000, Math.min(0x7fffff, Math.round(cts / 90))), 2, 3);
    let p = 5;
    for (let i = 0; i < n; i++) {
      const s = this.starts[i];
      const t = b[s] & 0x1f;
      if (t === NAL_SPS || t === NAL_PPS || t === NAL_AUD) continue;
      body.writeUInt32BE(this.ends[i] - s, p);
      b.copy(body, p + 4, s, this.ends[i]);
      p += 4 + this.ends[i] - s;
    }
    this.out.push({ type: 9, timestamp: ms, body });
  }

  /** One tag per ADTS frame, each at the PES time plus the samples before it; stops at a bad frame. */
  private aacFrames(u: TsPesUnit, dts: number): void {
    const b = u.data;
    let p = u.start;
    let samples = 0;
    while (p + 7 <= u.end && b[p] === 0xff && (b[p + 1] & 0xf6) === 0xf0) {
      const len = ((b[p + 3] & 3) << 11) | (b[p + 4] << 3) | (b[p + 5] >> 5);
      const hdr = (b[p + 1] & 1) === 1 ? 7 : 9;
      const cfg: AacConfig = { profile: b[p + 2] >> 6, freqIndex: (b[p + 2] >> 2) & 15, channels: ((b[p + 2] & 1) << 2) | (b[p + 3] >> 6) };
      if (len <= hdr || p + len > u.end || cfg.freqIndex > 12 || cfg.profile === 3) return;
      if (!sameAac(this.aac, cfg)) {
        this.aac = cfg;
        const asc = buildAsc(cfg);
        this.audioOut({ type: 8, timestamp: this.ms(dts + samples * 90000 / AAC_RATES[cfg.freqIndex], false), body: Buffer.from([0xaf, 0, asc[0], asc[1]]) });
      }
      const body = Buffer.allocUnsafe(2 + len - hdr);
      body[0] = 0xaf;
      body[1] = 1;
      b.copy(body, 2, p + hdr, p + len);
      this.audioOut({ type: 8, timestamp: this.ms(dts + samples * 90000 / AAC_RATES[cfg.freqIndex], false), body });
      samples += 1024 * ((b[p + 6] & 3) + 1);
      p += len;
    }
  }

  /** MPEG audio: layer III only (what FLV carries), the PES as one tag. */
  private mp3(u: TsPesUnit, dts: number): void {
    const b = u.data;
    if (u.end - u.start < 4 || b[u.start] !== 0xff || (b[u.start + 1] & 0xe0) !== 0xe0 || ((b[u.start + 1] >> 1) & 3) !== 1) return;
    const body = Buffer.allocUnsafe(1 + u.end - u.start);
    body[0] = (b[u.start + 3] >> 6) === 3 ? 0x2e : 0x2f; // MP3, "44 kHz", 16-bit, mono or stereo from the channel mode
    b.copy(body, 1, u.start, u.end);
    this.audioOut({ type: 8, timestamp: this.ms(dts, false), body });
  }

  /**
   * An audio tag, held while the program has video whose header has not gone out yet (so video is
   * track #0 for every reader, as the publisher's PMT lists it), up to HOLD_TAGS / HOLD_MS.
   */
  private audioOut(tag: FlvTag): void {
    if (!this.holding || !this.demux.hasVideo) {
      this.release();
      this.out.push(tag);
      return;
    }
    this.held.push(tag);
    if (this.held.length >= HOLD_TAGS || tag.timestamp - this.held[0].timestamp >= HOLD_MS) this.release();
  }

  /** Holding ends: the audio tags held go out (after the video header, when it is what ended it). */
  private release(): void {
    this.holding = false;
    if (this.held.length === 0) return;
    for (const tag of this.held) this.out.push(tag);
    this.held = [];
  }
}

function sameList(a: Buffer[], b: Buffer[]): boolean {
  return a.length === b.length && a.every((x, i) => x.equals(b[i]));
}
