import { PID_PAT, PID_PMT, TS_PACKET, TS_SYNC, crc32, writePcr, writeTimestamp } from './ts-common.ts';

export interface TsStream { pid: number; streamType: number }

/**
 * Writes whole TS packets straight into the caller's output Buffer: one PES at a time, its payload
 * gathered from (buffer, start, end) segments held in parallel arrays reused between units (no
 * per-packet or per-segment objects), continuity counters per PID, and the PAT/PMT pair.
 */
export class TsWriter {
  private readonly cc = new Uint8Array(8192);
  private readonly segBuf: Uint8Array[] = [];
  private readonly segStart: number[] = [];
  private readonly segEnd: number[] = [];
  private segCount = 1;
  private headerLen = 0;
  /** Payload bytes added since reset() (the PES header not included). */
  payloadBytes = 0;
  private readonly header = Buffer.alloc(19);
  private pat = Buffer.alloc(0);
  private pmt = Buffer.alloc(0);

  /** Starts a unit: slot 0 is kept for the PES header. */
  reset(): void {
    this.segCount = 1;
    this.payloadBytes = 0;
  }

  add(buf: Uint8Array, start: number, end: number): void {
    if (end <= start) return;
    const i = this.segCount++;
    this.segBuf[i] = buf;
    this.segStart[i] = start;
    this.segEnd[i] = end;
    this.payloadBytes += end - start;
  }

  /** The PES header for the payload added so far; `bounded` writes PES_packet_length (0 otherwise, as ffmpeg does for video). */
  pesHeader(streamId: number, pts: number, dts: number, bounded: boolean): void {
    const h = this.header;
    const both = pts !== dts;
    const dataLen = both ? 10 : 5;
    h[0] = 0; h[1] = 0; h[2] = 1; h[3] = streamId;
    const len = 3 + dataLen + this.payloadBytes;
    const l = bounded && len <= 0xffff ? len : 0;
    h[4] = l >> 8; h[5] = l & 0xff;
    h[6] = streamId === 0xe0 ? 0x84 : 0x80;
    h[7] = both ? 0xc0 : 0x80;
    h[8] = dataLen;
    writeTimestamp(h, 9, both ? 3 : 2, pts);
    if (both) writeTimestamp(h, 14, 1, dts);
    this.headerLen = 9 + dataLen;
    this.segBuf[0] = h;
    this.segStart[0] = 0;
    this.segEnd[0] = this.headerLen;
  }

  /** TS packets the current PES takes (its first packet carries an adaptation field of `firstAf` bytes). */
  packets(firstAf: number): number {
    const total = this.headerLen + this.payloadBytes;
    const first = TS_PACKET - 4 - firstAf;
    return total <= first ? 1 : 1 + Math.ceil((total - first) / (TS_PACKET - 4));
  }

  /** Adaptation-field bytes the first packet needs for a PCR and/or the random access flag. */
  static firstAf(pcr: boolean, rai: boolean): number {
    return pcr ? 8 : rai ? 2 : 0;
  }

  /** Writes the current PES as TS packets at `at`; returns the offset after them. `pcr` < 0: none. */
  writePes(out: Buffer, at: number, pid: number, pcr: number, rai: boolean): number {
    let remaining = this.headerLen + this.payloadBytes;
    let seg = 0;
    let pos = this.segStart[0];
    let first = true;
    while (remaining > 0) {
      const want = first ? TsWriter.firstAf(pcr >= 0, rai) : 0;
      const payload = Math.min(remaining, TS_PACKET - 4 - want);
      const af = Math.max(want, TS_PACKET - 4 - payload);
      out[at] = TS_SYNC;
      out[at + 1] = (first ? 0x40 : 0) | ((pid >> 8) & 0x1f);
      out[at + 2] = pid & 0xff;
      out[at + 3] = (af > 0 ? 0x30 : 0x10) | this.nextCc(pid);
      if (af > 0) {
        out[at + 4] = af - 1;
        if (af > 1) {
          const withPcr = first && pcr >= 0;
          out[at + 5] = (first && rai ? 0x40 : 0) | (withPcr ? 0x10 : 0);
          if (withPcr) writePcr(out, at + 6, pcr);
          out.fill(0xff, at + 6 + (withPcr ? 6 : 0), at + 4 + af);
        }
      }
      let q = at + 4 + af;
      let left = payload;
      while (left > 0) {
        const n = Math.min(left, this.segEnd[seg] - pos);
        out.set(this.segBuf[seg].subarray(pos, pos + n), q);
        q += n; pos += n; left -= n;
        if (pos >= this.segEnd[seg] && seg + 1 < this.segCount) { seg++; pos = this.segStart[seg]; }
      }
      remaining -= payload;
      at += TS_PACKET;
      first = false;
    }
    return at;
  }

  /** Sets the program (one PMT) the PAT/PMT describe. */
  setProgram(streams: TsStream[], pcrPid: number, version: number): void {
    const v = 0xc1 | ((version & 31) << 1);
    const pat = Buffer.from([0x00, 0xb0, 13, 0x00, 0x01, v, 0, 0, 0x00, 0x01, 0xe0 | (PID_PMT >> 8), PID_PMT & 0xff, 0, 0, 0, 0]);
    const pmt = Buffer.alloc(12 + 5 * streams.length + 4);
    pmt.set([0x02, 0xb0, 9 + 5 * streams.length + 4, 0x00, 0x01, v, 0, 0, 0xe0 | (pcrPid >> 8), pcrPid & 0xff, 0xf0, 0]);
    streams.forEach((s, i) => pmt.set([s.streamType, 0xe0 | (s.pid >> 8), s.pid & 0xff, 0xf0, 0], 12 + 5 * i));
    pat.writeUInt32BE(crc32(pat, 0, pat.length - 4), pat.length - 4);
    pmt.writeUInt32BE(crc32(pmt, 0, pmt.length - 4), pmt.length - 4);
    this.pat = pat;
    this.pmt = pmt;
  }

  /** Writes the PAT and PMT packets (2 x 188 bytes) at `at`; returns the offset after them. */
  writePsi(out: Buffer, at: number): number {
    at = this.writeSection(out, at, PID_PAT, this.pat);
    return this.writeSection(out, at, PID_PMT, this.pmt);
  }

  private writeSection(out: Buffer, at: number, pid: number, section: Buffer): number {
    out[at] = TS_SYNC;
    out[at + 1] = 0x40 | (pid >> 8);
    out[at + 2] = pid & 0xff;
    out[at + 3] = 0x10 | this.nextCc(pid);
    out[at + 4] = 0;
    out.set(section, at + 5);
    out.fill(0xff, at + 5 + section.length, at + TS_PACKET);
    return at + TS_PACKET;
  }

  private nextCc(pid: number): number {
    const c = this.cc[pid];
    this.cc[pid] = (c + 1) & 15;
    return c;
  }
}
