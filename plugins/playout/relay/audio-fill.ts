// Keeps the AAC audio of the output gapless across splices. For each AAC PID it knows the stream's
// ADTS format and where its last PES really ends (a PES may carry several frames), and fills a hole
// with silent frames: at the first PES of a segment that starts later than the previous one ended
// (an item whose audio starts late, or ended early), and, while a segment's video runs more than
// `FILL_LAG` ahead with no audio of its own yet, as the video goes (an item with a silent track).
import type { TsInput } from './ts-input.ts';
import { payloadOffset } from './ts-packet.ts';
import { AdtsCounter, adtsFormat, frameTicks, silencePacket, silentFrame, type AdtsFormat } from './silence.ts';

/** A hole longer than this is left alone (something else is wrong). */
const MAX_FILL = 10 * 90_000;
/** Past ffmpeg's muxer interleaving delay (0.7 s), so audio that is merely late is never covered. */
export const FILL_LAG = 90_000;
const STREAM_TYPE_AAC = 0x0f;

interface Track {
  format?: AdtsFormat;
  streamId: number;
  frame?: Buffer;
  ticks: number;
  /** Output DTS of the last PES sent and its frames so far. */
  start: number;
  count: AdtsCounter;
}

export class AudioFill {
  #tracks = new Map<number, Track>();
  #pids = new Set<number>();
  /** Silent frames sent. */
  filled = 0;

  /** A segment starts (its tables are known): the PIDs that carry AAC in it. */
  segment(input: TsInput): void {
    this.#pids.clear();
    for (const s of input.streams) if (s.streamType === STREAM_TYPE_AAC && s.kind === 'audio') this.#pids.add(s.pid);
  }

  /** A PES of `pid` passes at output DTS `out`; the first of a segment (`fresh`) teaches the format. */
  pesStart(p: Buffer, pid: number, out: number, fresh: boolean): void {
    if (!this.#pids.has(pid)) return;
    const o = payloadOffset(p);
    const from = o + 9 + p[o + 8]!;
    let t = this.#tracks.get(pid);
    if (!t) {
      t = { streamId: p[o + 3]!, ticks: 0, start: out, count: new AdtsCounter() };
      this.#tracks.set(pid, t);
      fresh = true;
    }
    if (fresh) this.#learn(t, p, from);
    t.start = out;
    t.count.start(p, from);
  }

  /** A later packet of the PES in progress on `pid`. */
  more(p: Buffer, pid: number): void {
    if (this.#pids.has(pid)) this.#tracks.get(pid)?.count.feed(p, payloadOffset(p));
  }

  /** Output time at which the last frame sent on `pid` ends, when known. */
  end(pid: number): number | undefined {
    const t = this.#tracks.get(pid);
    if (!t?.format) return undefined;
    return t.start + Math.max(1, t.count.frames) * t.ticks;
  }

  /**
   * Silent frames on `pid` from the end of its last frame up to `until` (output time), whole
   * frames only (what is left is shorter than one frame), for a PID the current segment carries.
   */
  fill(pid: number, until: number, emit: (p: Buffer, at: number) => void): void {
    const t = this.#tracks.get(pid);
    let at = this.end(pid);
    if (!t?.frame || at === undefined || !this.#pids.has(pid) || until - at > MAX_FILL) return;
    while (at + t.ticks <= until) {
      emit(silencePacket(pid, t.streamId, at, t.frame), Math.round(at));
      t.start = at;
      t.count.frames = 1;
      this.filled++;
      at += t.ticks;
    }
  }

  #learn(t: Track, p: Buffer, from: number): void {
    const format = adtsFormat(p, from);
    if (!format) return;
    if (t.format?.header.subarray(0, 4).equals(format.header.subarray(0, 4))) return;
    t.format = format;
    t.frame = silentFrame(format);
    t.ticks = frameTicks(format);
  }
}
