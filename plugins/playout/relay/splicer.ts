// The output timeline. Inputs (source runs, loops of the error-frame clip) follow one another as
// "segments"; each segment starts at a keyframe of its primary stream and gets ONE offset for all its
// timestamps (so the source's A/V sync is kept) chosen so that its first primary DTS is the previous
// segment's last primary DTS plus one frame. Streams other than the primary drop any PES that would go
// backwards, or (the first of a segment) start before the previous segment's last frame of that stream ends. Continuity counters are renumbered per PID so the consumer sees one unbroken stream.
import type { TsInput } from './ts-input.ts';
import {
  hasPayload, isUnitStart, pidOf, readPcr, readPesStamps, setContinuity, shiftPesStamps, TS_WRAP, writePcr,
} from './ts-packet.ts';
import { AudioFill, FILL_LAG } from './audio-fill.ts';

/** Receives every output packet; `key` marks the first packet of a primary keyframe. */
export type SpliceEmit = (packet: Buffer, key: boolean) => void;

const DEFAULT_FRAME = 3600; // 25 fps, until a duration was measured

export class Splicer {
  #emit: SpliceEmit;
  #input: TsInput | undefined;
  #waiting = true;
  #offset = 0;
  #lastIn = -1;
  #lastInDts = new Map<number, number>();
  #lastOut = new Map<number, number>();
  #passing = new Set<number>();
  /** Per PID: the last DTS step seen (a frame), and the PIDs with no PES out in this segment yet. */
  #step = new Map<number, number>();
  #fresh = new Set<number>();
  #cc = new Map<number, number>();
  #primaryOut: number | undefined;
  #primaryDur = DEFAULT_FRAME;
  #firstOut: number | undefined;
  #tables: Buffer[] = [];
  #audio = new AudioFill();
  #fillAudio: boolean;
  /** PES (frames) sent and bytes sent. */
  packets = 0;
  bytes = 0;

  /** `fillAudio: false` leaves holes in AAC audio at splices as they come (tests compare). */
  constructor(emit: SpliceEmit, opts: { fillAudio?: boolean } = {}) {
    this.#emit = emit;
    this.#fillAudio = opts.fillAudio !== false;
  }

  /** Silent AAC frames filled in at splices so far. */
  get filled(): number {
    return this.#audio.filled;
  }

  /** The following packets come from `input`; nothing passes until its next primary keyframe. */
  begin(input: TsInput): void {
    this.#input = input;
    this.#waiting = true;
    this.#lastIn = -1;
    this.#lastInDts.clear();
    this.#passing.clear();
    this.#fresh = new Set(this.#lastOut.keys());
  }

  get waiting(): boolean {
    return this.#waiting;
  }

  /** The last PAT and PMT sent, for a consumer that joins now. */
  tables(): Buffer[] {
    return this.#tables.map((t) => Buffer.from(t));
  }

  /** Seconds of output media so far. */
  time(): number {
    return this.#primaryOut === undefined || this.#firstOut === undefined ? 0 : (this.#primaryOut - this.#firstOut) / 90_000;
  }

  /** Rewrites `p` in place and emits it, or drops it. */
  feed(p: Buffer): void {
    const input = this.#input;
    if (!input) return;
    const pid = pidOf(p);
    if (pid === 0 || pid === input.pmtPid) {
      if (!this.#waiting) this.#table(p);
      return;
    }
    if (this.#waiting) {
      if (!input.isKeyframe(p)) return;
      const st = readPesStamps(p);
      if (!st) return;
      this.#offset = this.#primaryOut === undefined ? 0 : this.#primaryOut + this.#primaryDur - st.dts;
      this.#lastIn = st.dts;
      this.#waiting = false;
      this.#audio.segment(input);
      if (input.pat) this.#table(Buffer.from(input.pat));
      if (input.pmt) this.#table(Buffer.from(input.pmt));
    }
    if (!hasPayload(p)) {
      if (readPcr(p) >= 0) { this.#shiftPcr(p); this.#out(p, false); }
      return;
    }
    if (isUnitStart(p)) {
      if (!this.#startPes(p, pid)) return;
    } else if (!this.#passing.has(pid)) return;
    else this.#audio.more(p, pid);
    if (readPcr(p) >= 0) this.#shiftPcr(p);
    this.#out(p, pid === input.primary && isUnitStart(p) && input.isKeyframe(p));
  }

  /** Decides whether a PES passes (its DTS must move forward) and shifts its stamps. */
  #startPes(p: Buffer, pid: number): boolean {
    const st = readPesStamps(p);
    if (!st) { this.#passing.add(pid); return true; }
    const dts = this.#unwrap(st.dts);
    const out = dts + this.#offset;
    const fresh = this.#fresh.has(pid);
    if (out <= this.#endOf(pid, fresh)) { this.#passing.delete(pid); return false; }
    this.#passing.add(pid);
    if (fresh) {
      if (this.#fillAudio) this.#audio.fill(pid, out, this.#silent);
      this.#fresh.delete(pid);
    }
    this.#audio.pesStart(p, pid, out, fresh);
    const prevIn = this.#lastInDts.get(pid);
    if (prevIn !== undefined && dts > prevIn && dts - prevIn < 90_000) this.#step.set(pid, dts - prevIn);
    this.#lastInDts.set(pid, dts);
    this.#lastOut.set(pid, out);
    shiftPesStamps(p, out - st.dts);
    if (pid === this.#input!.primary) {
      if (this.#fresh.size > 0 && this.#fillAudio) for (const a of this.#fresh) this.#audio.fill(a, out - FILL_LAG, this.#silent);
      if (prevIn !== undefined && dts > prevIn && dts - prevIn < 90_000) this.#primaryDur = dts - prevIn;
      this.#primaryOut = out;
      this.#firstOut ??= out;
    }
    this.packets++;
    return true;
  }

  /**
   * The output time a PES of `pid` must pass: its last one's DTS, and for the first PES of a
   * segment the end of the previous segment's last frame (exact for AAC, one step otherwise).
   */
  #endOf(pid: number, fresh: boolean): number {
    const last = this.#lastOut.get(pid);
    if (last === undefined) return -Infinity;
    if (!fresh) return last;
    return (this.#audio.end(pid) ?? last + (this.#step.get(pid) ?? 0)) - 1;
  }

  /** Emits a silent audio frame made by the audio filler (its PID's stamps move on with it). */
  #silent = (p: Buffer, at: number): void => {
    this.#lastOut.set(pidOf(p), at);
    this.#out(p, false);
  };

  #shiftPcr(p: Buffer): void {
    const pcr = readPcr(p);
    const base = Math.floor(pcr / 300);
    writePcr(p, (this.#unwrap(base) + this.#offset) * 300 + (pcr % 300));
  }

  /** Input stamps as a line without the 2^33 wrap: the value nearest to the last one seen. */
  #unwrap(raw: number): number {
    if (this.#lastIn < 0) { this.#lastIn = raw; return raw; }
    const v = raw + Math.round((this.#lastIn - raw) / TS_WRAP) * TS_WRAP;
    this.#lastIn = v;
    return v;
  }

  #table(p: Buffer): void {
    const pid = pidOf(p);
    if (pid === 0) this.#tables[0] = p;
    else this.#tables[1] = p;
    this.#out(p, false);
  }

  #out(p: Buffer, key: boolean): void {
    if (hasPayload(p)) {
      const pid = pidOf(p);
      const cc = ((this.#cc.get(pid) ?? -1) + 1) & 0x0f;
      this.#cc.set(pid, cc);
      setContinuity(p, cc);
    }
    this.bytes += p.length;
    this.#emit(p, key);
  }
}
