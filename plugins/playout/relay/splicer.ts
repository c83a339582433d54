// The output timeline. Inputs (source runs, loops of the error-frame clip) follow one another as
// "segments"; each segment starts at a keyframe of its primary stream and gets ONE offset for all its
// timestamps (so the source's A/V sync is kept) chosen so that its first primary DTS is the previous
// segment's last primary DTS plus one frame. Streams other than the primary drop any PES that would go
// backwards, or (the first of a segment) start before the previous segment's last frame of that stream ends. Continuity counters are renumbered per PID so the consumer sees one unbroken stream.
import type { TsInput } from './ts-input.ts';
import {
  hasPayload, isUnitStart, pidOf, readPcr, readPesStamps, setContinuity, shiftPesStamps, TS_WRAP, writePcr,
} from './ts-packet.ts';

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
  /** PES (frames) sent and bytes sent. */
  packets = 0;
  bytes = 0;

  constructor(emit: SpliceEmit) {
    this.#emit = emit;
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
    if (readPcr(p) >= 0) this.#shiftPcr(p);
    this.#out(p, pid === input.primary && isUnitStart(p) && input.isKeyframe(p));
  }

  /** Decides whether a PES passes (its DTS must move forward) and shifts its stamps. */
  #startPes(p: Buffer, pid: number): boolean {
    const st = readPesStamps(p);
    if (!st) { this.#passing.add(pid); return true; }
    const dts = this.#unwrap(st.dts);
    const out = dts + this.#offset;
    const last = this.#lastOut.get(pid);
    // the first PES of a stream in a segment must also start after the previous segment's last frame ends
    const end = last === undefined ? undefined : last + (this.#fresh.has(pid) ? (this.#step.get(pid) ?? 0) - 1 : 0);
    if (end !== undefined && out <= end) { this.#passing.delete(pid); return false; }
    this.#passing.add(pid);
    this.#fresh.delete(pid);
    const prevIn = this.#lastInDts.get(pid);
    if (prevIn !== undefined && dts > prevIn && dts - prevIn < 90_000) this.#step.set(pid, dts - prevIn);
    this.#lastInDts.set(pid, dts);
    this.#lastOut.set(pid, out);
    shiftPesStamps(p, out - st.dts);
    if (pid === this.#input!.primary) {
      if (prevIn !== undefined && dts > prevIn && dts - prevIn < 90_000) this.#primaryDur = dts - prevIn;
      this.#primaryOut = out;
      this.#firstOut ??= out;
    }
    this.packets++;
    return true;
  }

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
