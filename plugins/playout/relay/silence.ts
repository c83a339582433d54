// Silent AAC frames, to fill a hole in the audio at a splice (an item whose audio starts late or
// ends early, an item without sound). An AAC-LC raw_data_block (ISO/IEC 14496-3 4.4.2) with one
// element per channel of the ADTS channel configuration, each an individual_channel_stream whose
// max_sfb is 0: no scale factors and no spectral data, so every decoder outputs 1024 samples of
// zero per channel. The ADTS header is the stream's own (profile, rate, channels), with the frame
// length rewritten. Each frame goes in a PES of its own in one TS packet, stamped like the stream.
import { TS_SIZE } from './ts-packet.ts';

/** The ADTS sampling_frequency_index table. */
const RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];

/** Syntactic elements of each channel configuration 1-7: s = SCE, c = CPE, l = LFE. */
const LAYOUTS = ['', 's', 'c', 'sc', 'scs', 'scc', 'sccl', 'scccl'];

class Bits {
  #bytes: number[] = [];
  #n = 0;
  put(value: number, width: number): void {
    for (let i = width - 1; i >= 0; i--) {
      if (this.#n % 8 === 0) this.#bytes.push(0);
      if ((value >> i) & 1) this.#bytes[this.#bytes.length - 1]! |= 0x80 >> (this.#n % 8);
      this.#n++;
    }
  }
  done(): Buffer {
    return Buffer.from(this.#bytes);
  }
}

/** individual_channel_stream with no coefficients: global_gain, ics_info (long window, max_sfb 0), no tools. */
function emptyChannel(b: Bits): void {
  b.put(100, 8); // global_gain: any value, nothing is scaled by it
  b.put(0, 1); // ics_reserved_bit
  b.put(0, 2); // window_sequence ONLY_LONG_SEQUENCE
  b.put(0, 1); // window_shape
  b.put(0, 6); // max_sfb
  b.put(0, 1); // predictor_data_present
  b.put(0, 3); // pulse, tns, gain control: absent
}

/** The raw_data_block of one silent frame for an ADTS channel configuration (1-7). */
export function silentBlock(channelConfig: number): Buffer {
  const layout = LAYOUTS[channelConfig];
  if (!layout) throw new RangeError(`no silent frame for channel configuration ${channelConfig}`);
  const b = new Bits();
  const tags = { s: 0, c: 0, l: 0 };
  for (const el of layout as Iterable<'s' | 'c' | 'l'>) {
    b.put(el === 's' ? 0 : el === 'c' ? 1 : 3, 3); // ID_SCE, ID_CPE, ID_LFE
    b.put(tags[el]++, 4); // element_instance_tag
    if (el === 'c') {
      b.put(0, 1); // common_window
      emptyChannel(b);
    }
    emptyChannel(b);
  }
  b.put(7, 3); // ID_END
  return b.done();
}

/** What a stream's ADTS header says: enough to make silent frames like its own. */
export interface AdtsFormat {
  /** The 7 header bytes of one of its frames (protection_absent set). */
  header: Buffer;
  rate: number;
  channels: number;
}

/** The ADTS format of an AAC frame at `at` in `b`, or undefined (no sync word, CRC, or an unknown rate/layout). */
export function adtsFormat(b: Buffer, at: number): AdtsFormat | undefined {
  if (at + 7 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xf6) !== 0xf0) return undefined;
  if ((b[at + 1]! & 0x01) === 0) return undefined; // a CRC follows the header: not worth supporting
  const rate = RATES[(b[at + 2]! >> 2) & 0x0f];
  const channels = ((b[at + 2]! & 0x01) << 2) | (b[at + 3]! >> 6);
  if (!rate || !LAYOUTS[channels]) return undefined;
  return { header: Buffer.from(b.subarray(at, at + 7)), rate, channels };
}

/** One silent ADTS frame (header + block) in the stream's format. */
export function silentFrame(f: AdtsFormat): Buffer {
  const block = silentBlock(f.channels);
  const frame = Buffer.concat([f.header, block]);
  const len = frame.length;
  frame[3] = (frame[3]! & 0xfc) | ((len >> 11) & 0x03);
  frame[4] = (len >> 3) & 0xff;
  frame[5] = ((len & 0x07) << 5) | 0x1f; // buffer fullness 0x7FF (variable rate)
  frame[6] = 0xfc; // the rest of the fullness, one raw data block
  return frame;
}

/** Duration of one AAC frame (1024 samples) in 90 kHz ticks. */
export function frameTicks(f: AdtsFormat): number {
  return (1024 * 90_000) / f.rate;
}

/**
 * One TS packet carrying `frame` in a PES of `streamId` stamped `pts` (as DTS too), padded with an
 * adaptation field. The continuity counter is left 0 for the splicer to set.
 */
export function silencePacket(pid: number, streamId: number, pts: number, frame: Buffer): Buffer {
  const pes = 14 + frame.length;
  const stuffing = TS_SIZE - 4 - pes; // bytes of the adaptation field, its length byte included
  if (stuffing < 2) throw new RangeError('silent frame too long for one packet');
  const p = Buffer.alloc(TS_SIZE, 0xff);
  p[0] = 0x47;
  p[1] = 0x40 | ((pid >> 8) & 0x1f);
  p[2] = pid & 0xff;
  p[3] = 0x30; // adaptation field and payload
  p[4] = stuffing - 1;
  p[5] = 0x00; // no flags; the rest is 0xff stuffing
  let o = 4 + stuffing;
  p.writeUIntBE(0x000001, o, 3);
  p[o + 3] = streamId;
  p.writeUInt16BE(8 + frame.length, o + 4);
  p[o + 6] = 0x80;
  p[o + 7] = 0x80; // PTS only
  p[o + 8] = 5;
  writePts(p, o + 9, pts);
  o += 14;
  frame.copy(p, o);
  return p;
}

function writePts(p: Buffer, at: number, ts: number): void {
  const v = ((Math.round(ts) % 2 ** 33) + 2 ** 33) % 2 ** 33;
  const hi = Math.floor(v / 2 ** 30);
  const lo = v % 2 ** 30;
  p[at] = 0x21 | (hi << 1);
  p[at + 1] = (lo >> 22) & 0xff;
  p[at + 2] = (((lo >> 15) & 0x7f) << 1) | 1;
  p[at + 3] = (lo >> 7) & 0xff;
  p[at + 4] = ((lo & 0x7f) << 1) | 1;
}

/**
 * Counts the ADTS frames of one PID's current PES as its packets pass (a PES may carry several:
 * ffmpeg's muxer groups small frames), so the end of its last PES is known exactly. Reads only the
 * 13-bit frame lengths and skips the frame bodies; a lost sync stops the count until the next PES.
 */
export class AdtsCounter {
  frames = 0;
  #skip = 0;
  #head = Buffer.alloc(6);
  #have = 0;
  #lost = false;

  /** A new PES whose payload starts at `from` in `p`. */
  start(p: Buffer, from: number): void {
    this.frames = 0;
    this.#skip = 0;
    this.#have = 0;
    this.#lost = false;
    this.feed(p, from);
  }

  /** More payload of the same PES. */
  feed(p: Buffer, from: number): void {
    let i = from;
    while (i < p.length && !this.#lost) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, p.length - i);
        this.#skip -= n;
        i += n;
        continue;
      }
      while (this.#have < 6 && i < p.length) this.#head[this.#have++] = p[i++]!;
      if (this.#have < 6) return;
      const h = this.#head;
      const len = ((h[3]! & 0x03) << 11) | (h[4]! << 3) | (h[5]! >> 5);
      if (h[0] !== 0xff || (h[1]! & 0xf0) !== 0xf0 || len < 7) { this.#lost = true; return; }
      this.frames++;
      this.#have = 0;
      this.#skip = len - 6;
    }
  }
}
