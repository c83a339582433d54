/*
 * MPEG-TS to PES units, the first half of the core's TS-to-FLV remux (`ts-to-flv.ts`): the stream
 * table's SRT and HTTP-TS ingest and any plugin that reads recorded TS.
 */
import { TS_PACKET, TS_ST, TS_SYNC, tsCrc32 as crc32, tsReadStamp as readTimestamp } from './mpegts.ts';

/**
 * Largest PES kept (bytes): a longer one is dropped whole.
 *
 * @example
 * if (demux.buffered > 2 * PES_CAP) report();
 */
export const PES_CAP = 8 * 1024 * 1024;
const PES_INITIAL = 64 * 1024;

/** What a followed elementary stream carries. */
export type TsTrackKind = 'h264' | 'aac' | 'mp3';

/** A complete PES handed to the consumer: data[start, end) is its payload (valid only during the call). */
export interface TsPesUnit { kind: TsTrackKind; pts: number; dts: number; data: Buffer; start: number; end: number }

interface Track {
  pid: number;
  kind: TsTrackKind;
  buf: Buffer;
  len: number;
  /** Bytes the PES declares (header included); 0 unknown yet, -1 unbounded. */
  expected: number;
  started: boolean;
  peeked: boolean;
  cc: number;
}

function kindOf(streamType: number): TsTrackKind | undefined {
  if (streamType === TS_ST.h264) return 'h264';
  if (streamType === TS_ST.aacAdts) return 'aac';
  if (streamType === TS_ST.mpeg1Audio || streamType === TS_ST.mpeg2Audio) return 'mp3';
  return undefined;
}

/**
 * MPEG-TS packets to PES units: resyncs on 0x47, carries at most 187 bytes of a partial packet
 * between calls, follows the first program of the PAT and, of its PMT, the first H.264 stream and
 * the first AAC (ADTS) or MPEG audio stream. Sections must fit one packet (as every muxer writes a
 * PAT/PMT this small). A continuity error or an over-long PES drops that PES.
 *
 * @example
 * const demux = new TsDemux((u) => frames.push(u.data.subarray(u.start, u.end)), () => {});
 * demux.push(chunk);
 * demux.flush();
 */
export class TsDemux {
  private readonly carry = Buffer.alloc(TS_PACKET);
  private carryLen = 0;
  private pmtPid = -1;
  private tracks: Track[] = [];
  private readonly onPes: (u: TsPesUnit) => void;
  private readonly onStart: (dts: number) => void;
  private readonly unit: TsPesUnit = { kind: 'h264', pts: 0, dts: 0, data: Buffer.alloc(0), start: 0, end: 0 };

  /** `onStart` sees each PES's DTS as soon as its header is in; `onPes` each complete PES. */
  constructor(onPes: (u: TsPesUnit) => void, onStart: (dts: number) => void) {
    this.onPes = onPes;
    this.onStart = onStart;
  }

  /** Bytes of a partial packet carried over (at most 187). */
  get pending(): number { return this.carryLen; }

  /** Whether the program followed has an H.264 stream (known once its PMT was read). */
  get hasVideo(): boolean { return this.tracks.some((t) => t.kind === 'h264'); }

  /** Bytes of PES data held (at most PES_CAP per followed stream). */
  get buffered(): number { return this.tracks.reduce((n, t) => n + t.buf.length, 0); }

  push(chunk: Buffer): void {
    let p = 0;
    if (this.carryLen > 0) {
      const n = Math.min(TS_PACKET - this.carryLen, chunk.length);
      chunk.copy(this.carry, this.carryLen, 0, n);
      this.carryLen += n;
      p = n;
      if (this.carryLen < TS_PACKET) return;
      this.carryLen = 0;
      this.packet(this.carry, 0);
    }
    while (p < chunk.length) {
      if (chunk[p] !== TS_SYNC) { const next = chunk.indexOf(TS_SYNC, p); if (next < 0) return; p = next; }
      if (p + TS_PACKET > chunk.length) {
        chunk.copy(this.carry, 0, p);
        this.carryLen = chunk.length - p;
        return;
      }
      this.packet(chunk, p);
      p += TS_PACKET;
    }
  }

  /** Hands over every PES still open (the end of the input). */
  flush(): void {
    for (const t of this.tracks) { if (t.started) this.finish(t); this.reset(t); }
  }

  private packet(b: Buffer, p: number): void {
    if ((b[p + 1] & 0x80) !== 0) return; // transport_error_indicator
    const pusi = (b[p + 1] & 0x40) !== 0;
    const pid = ((b[p + 1] & 0x1f) << 8) | b[p + 2];
    const afc = (b[p + 3] >> 4) & 3;
    let s = p + 4;
    if ((afc & 2) !== 0) s += 1 + b[p + 4];
    const end = p + TS_PACKET;
    if ((afc & 1) === 0 || s >= end) return;
    if (pid === 0) { if (pusi) this.pat(b, s, end); return; }
    if (pid === this.pmtPid) { if (pusi) this.pmt(b, s, end); return; }
    for (const t of this.tracks) if (t.pid === pid) { this.payload(t, b, s, end, pusi, b[p + 3] & 15); return; }
  }

  /** A section's [start, end) when it fits the packet and its CRC holds; undefined otherwise. */
  private section(b: Buffer, s: number, end: number, tableId: number): [number, number] | undefined {
    const sec = s + 1 + b[s];
    if (sec + 3 > end || b[sec] !== tableId) return undefined;
    const secEnd = sec + 3 + (((b[sec + 1] & 0x0f) << 8) | b[sec + 2]);
    if (secEnd > end || secEnd - sec < 16 - (tableId === 0 ? 4 : 0) || crc32(b, sec, secEnd) !== 0) return undefined;
    return [sec, secEnd];
  }

  private pat(b: Buffer, s: number, end: number): void {
    const r = this.section(b, s, end, 0);
    if (!r) return;
    for (let i = r[0] + 8; i + 4 <= r[1] - 4; i += 4) {
      if (((b[i] << 8) | b[i + 1]) === 0) continue;
      this.pmtPid = ((b[i + 2] & 0x1f) << 8) | b[i + 3];
      return;
    }
  }

  private pmt(b: Buffer, s: number, end: number): void {
    const r = this.section(b, s, end, 2);
    if (!r) return;
    const chosen: Array<{ pid: number; kind: TsTrackKind }> = [];
    let i = r[0] + 12 + (((b[r[0] + 10] & 0x0f) << 8) | b[r[0] + 11]);
    for (; i + 5 <= r[1] - 4; i += 5 + (((b[i + 3] & 0x0f) << 8) | b[i + 4])) {
      const kind = kindOf(b[i]);
      if (!kind) continue;
      const video = kind === 'h264';
      if (chosen.some((c) => (c.kind === 'h264') === video)) continue;
      chosen.push({ pid: ((b[i + 1] & 0x1f) << 8) | b[i + 2], kind });
    }
    const same = chosen.length === this.tracks.length && chosen.every((c, k) => c.pid === this.tracks[k].pid && c.kind === this.tracks[k].kind);
    if (same) return;
    this.tracks = chosen.map((c) => ({ pid: c.pid, kind: c.kind, buf: Buffer.alloc(0), len: 0, expected: 0, started: false, peeked: false, cc: -1 }));
  }

  private payload(t: Track, b: Buffer, s: number, end: number, pusi: boolean, cc: number): void {
    if (t.cc >= 0 && cc === t.cc) return; // a duplicate packet
    const lost = t.cc >= 0 && cc !== ((t.cc + 1) & 15);
    t.cc = cc;
    if (pusi) {
      if (t.started && !lost) this.finish(t);
      this.reset(t);
      t.started = true;
    } else if (!t.started || lost) {
      this.reset(t);
      return;
    }
    if (!this.append(t, b, s, end)) return;
    if (t.expected === 0 && t.len >= 6) {
      const l = (t.buf[4] << 8) | t.buf[5];
      t.expected = l === 0 ? -1 : l + 6;
    }
    if (!t.peeked && t.len >= 9 && t.len >= 9 + t.buf[8]) {
      t.peeked = true;
      const ts = this.timestamps(t);
      if (ts) this.onStart(ts[1]);
    }
    if (t.expected > 0 && t.len >= t.expected) {
      this.finish(t);
      this.reset(t);
    }
  }

  private append(t: Track, b: Buffer, s: number, end: number): boolean {
    const n = end - s;
    if (t.len + n > PES_CAP) { this.reset(t); t.buf = Buffer.alloc(0); return false; }
    if (t.len + n > t.buf.length) {
      let size = Math.max(PES_INITIAL, t.buf.length);
      while (size < t.len + n) size *= 2;
      const grown = Buffer.allocUnsafe(Math.min(size, PES_CAP));
      t.buf.copy(grown, 0, 0, t.len);
      t.buf = grown;
    }
    b.copy(t.buf, t.len, s, end);
    t.len += n;
    return true;
  }

  private reset(t: Track): void {
    t.len = 0;
    t.expected = 0;
    t.started = false;
    t.peeked = false;
  }

  /** [pts, dts] of the PES in t.buf; undefined when its header is malformed or has no PTS. */
  private timestamps(t: Track): [number, number] | undefined {
    const h = t.buf;
    if (t.len < 9 || h[0] !== 0 || h[1] !== 0 || h[2] !== 1 || (h[7] & 0x80) === 0) return undefined;
    if (9 + h[8] > t.len || h[8] < ((h[7] & 0x40) !== 0 ? 10 : 5)) return undefined;
    const pts = readTimestamp(h, 9);
    return [pts, (h[7] & 0x40) !== 0 ? readTimestamp(h, 14) : pts];
  }

  private finish(t: Track): void {
    const ts = this.timestamps(t);
    if (!ts) return;
    const u = this.unit;
    u.kind = t.kind;
    u.pts = ts[0];
    u.dts = ts[1];
    u.data = t.buf;
    u.start = 9 + t.buf[8];
    u.end = t.expected > 0 ? Math.min(t.expected, t.len) : t.len;
    if (u.end > u.start) this.onPes(u);
  }
}
