import { NAL_AUD, NAL_IDR, NAL_SPS, TS_ST, parseAsc, parseAvcConfig, writeAdts, type AacConfig, type AvcConfig } from '../../../sdk/index.ts';
import { PID_AUDIO, PID_VIDEO, WRAP33 } from './ts-common.ts';
import { TsWriter, type TsStream } from './ts-writer.ts';
import { FLV_AUDIO_AAC, FLV_AUDIO_MP3, FLV_VIDEO_AVC, type FlvTag } from './types.ts';

/** Added to every DTS/PTS (90 kHz): 1.4 s, as ffmpeg's muxer, so that PCR = DTS - 0.7 s starts positive. */
export const TS_OFFSET = 126_000;
/** How far the PCR runs behind the DTS it is sent with (90 kHz). */
export const PCR_DELAY = 63_000;
/** Least gap between two PAT/PMT pairs of an audio-only stream (ms). */
export const PSI_PERIOD_MS = 100;

const TWO31 = 2147483648;
const TWO32 = 4294967296;
const AUD = Buffer.from([0, 0, 0, 1, 9, 0xf0]);
const START = Buffer.from([0, 0, 0, 1]);

/**
 * FLV tags (H.264, AAC, MP3) to MPEG-TS packets: one output Buffer per tag, written in place.
 * Tags of any other codec (enhanced-RTMP FourCC video included) yield nothing.
 */
export class FlvToTs {
  private readonly w = new TsWriter();
  private readonly adts = Buffer.alloc(7);
  private avc: AvcConfig | undefined;
  private aac: AacConfig | undefined;
  private audioType = 0;
  private hasVideo = false;
  private version = 0;
  private psiDue = true;
  private lastPsiMs = -1;
  private epoch = 0;
  private lastMs = -1;

  push(tag: FlvTag): Buffer | undefined {
    try {
      if (tag.body.length < 2) return undefined;
      const ms = this.extend(tag.timestamp);
      if (tag.type === 9) return this.video(tag.body, ms);
      if (tag.type === 8) return this.audio(tag.body, ms);
      return undefined;
    } catch {
      return undefined;
    }
  }

  /** 32-bit ms extended over its wraparound (a tag just before the wrap after one just past it stays before). */
  private extend(ts: number): number {
    let v = (ts >>> 0) + this.epoch;
    if (this.lastMs >= 0) {
      if (v < this.lastMs - TWO31) { this.epoch += TWO32; v += TWO32; }
      else if (v > this.lastMs + TWO31) v -= TWO32;
    }
    if (v > this.lastMs) this.lastMs = v;
    return v;
  }

  private video(b: Buffer, ms: number): Buffer | undefined {
    if ((b[0] & 0x80) !== 0 || (b[0] & 0x0f) !== FLV_VIDEO_AVC || b.length < 5) return undefined;
    if (b[1] === 0) {
      const cfg = parseAvcConfig(b, 5);
      if (cfg) this.avc = cfg;
      if (cfg && !this.hasVideo) { this.hasVideo = true; this.programChanged(); }
      return undefined;
    }
    if (b[1] !== 1 || !this.avc) return undefined;
    const cts = (b.readIntBE(2, 3));
    const key = (b[0] >> 4) === 1;
    const w = this.w;
    w.reset();
    w.add(AUD, 0, AUD.length);
    const scan = this.scanNals(b, false);
    if (scan.idr && !scan.sps) {
      for (const s of this.avc.sps) { w.add(START, 0, 4); w.add(s, 0, s.length); }
      for (const p of this.avc.pps) { w.add(START, 0, 4); w.add(p, 0, p.length); }
    }
    this.scanNals(b, true);
    if (w.payloadBytes === AUD.length) return undefined;
    const dts = ms * 90 + TS_OFFSET;
    return this.emit(PID_VIDEO, 0xe0, dts + cts * 90, dts, false, key, ms);
  }

  private readonly scanResult = { idr: false, sps: false };

  /** Walks the AVCC NAL units of a frame: notes IDR/SPS presence, or (add) adds them as Annex B. Stops at a bad length. */
  private scanNals(b: Buffer, add: boolean): { idr: boolean; sps: boolean } {
    const size = this.avc!.lengthSize;
    const r = this.scanResult;
    r.idr = false;
    r.sps = false;
    let p = 5;
    while (p + size <= b.length) {
      const len = size === 4 ? b.readUInt32BE(p) : size === 2 ? b.readUInt16BE(p) : b[p];
      p += size;
      if (len === 0 || p + len > b.length) break;
      const t = b[p] & 0x1f;
      if (t === NAL_IDR) r.idr = true;
      else if (t === NAL_SPS) r.sps = true;
      if (add && t !== NAL_AUD) { this.w.add(START, 0, 4); this.w.add(b, p, p + len); }
      p += len;
    }
    return r;
  }

  private audio(b: Buffer, ms: number): Buffer | undefined {
    const fmt = b[0] >> 4;
    const w = this.w;
    const dts = ms * 90 + TS_OFFSET;
    if (fmt === FLV_AUDIO_AAC) {
      if (b[1] === 0) {
        const cfg = parseAsc(b, 2);
        if (cfg) { this.aac = cfg; this.setAudio(TS_ST.aacAdts); }
        return undefined;
      }
      const len = b.length - 2 + 7;
      if (b[1] !== 1 || !this.aac || len === 7 || len > 8191) return undefined;
      writeAdts(this.adts, 0, this.aac, len);
      w.reset();
      w.add(this.adts, 0, 7);
      w.add(b, 2, b.length);
      return this.emit(PID_AUDIO, 0xc0, dts, dts, true, false, ms);
    }
    if (fmt === FLV_AUDIO_MP3) {
      this.setAudio(TS_ST.mpeg1Audio);
      w.reset();
      w.add(b, 1, b.length);
      return this.emit(PID_AUDIO, 0xc0, dts, dts, true, false, ms);
    }
    return undefined;
  }

  private setAudio(streamType: number): void {
    if (this.audioType === streamType) return;
    this.audioType = streamType;
    this.programChanged();
  }

  private programChanged(): void {
    const streams: TsStream[] = [];
    if (this.hasVideo) streams.push({ pid: PID_VIDEO, streamType: TS_ST.h264 });
    if (this.audioType !== 0) streams.push({ pid: PID_AUDIO, streamType: this.audioType });
    this.w.setProgram(streams, this.pcrPid(), this.version);
    this.version = (this.version + 1) & 31;
    this.psiDue = true;
  }

  private pcrPid(): number {
    return this.hasVideo ? PID_VIDEO : PID_AUDIO;
  }

  private emit(pid: number, streamId: number, pts: number, dts: number, bounded: boolean, key: boolean, ms: number): Buffer {
    const w = this.w;
    w.pesHeader(streamId, pts % WRAP33, dts % WRAP33, bounded);
    const psi = this.psiDue || key || (!this.hasVideo && (ms - this.lastPsiMs >= PSI_PERIOD_MS || ms < this.lastPsiMs));
    const pcr = pid === this.pcrPid() ? (dts - PCR_DELAY) % WRAP33 : -1;
    const out = Buffer.allocUnsafe(((psi ? 2 : 0) + w.packets(TsWriter.firstAf(pcr >= 0, key))) * 188);
    let at = 0;
    if (psi) {
      at = w.writePsi(out, 0);
      this.psiDue = false;
      this.lastPsiMs = ms;
    }
    w.writePes(out, at, pid, pcr, key);
    return out;
  }
}
