// What one input stream (a source run or the error-frame clip) carries: its PAT and PMT (kept as
// packets so they can be replayed to a consumer joining late or at a splice), the elementary PIDs with
// their kind, and which PID is the "primary" one whose keyframes are the splice points.
import { tsPat, tsPmt, tsPrimary, type TsStream, type TsStreamKind } from '../../../sdk/index.ts';
import { isRandomAccess, isUnitStart, pidOf } from './ts-packet.ts';

export class TsInput {
  /** The last PAT and PMT packets seen, replayed at splices and to joining consumers. */
  pat: Buffer | undefined;
  pmt: Buffer | undefined;
  streams: TsStream[] = [];
  #pmtPid = -1;
  #kinds = new Map<number, TsStreamKind>();
  /** The PID whose keyframes are splice points: the first video stream, else the first stream. */
  primary = -1;

  /** Learns from PSI packets; returns true for PAT/PMT packets (they are not media). */
  observeTables(p: Buffer): boolean {
    const pid = pidOf(p);
    if (pid === 0) {
      const pmts = tsPat(p);
      if (pmts.length > 0) { this.#pmtPid = pmts[0]!; this.pat = Buffer.from(p); }
      return true;
    }
    if (pid !== this.#pmtPid) return false;
    const pmt = tsPmt(p);
    if (pmt) {
      this.pmt = Buffer.from(p);
      this.streams = pmt.streams;
      this.#kinds = new Map(pmt.streams.map((s) => [s.pid, s.kind]));
      this.primary = tsPrimary(pmt.streams)?.pid ?? -1;
    }
    return true;
  }

  get pmtPid(): number {
    return this.#pmtPid;
  }

  get ready(): boolean {
    return this.primary >= 0 && this.pat !== undefined;
  }

  kindOf(pid: number): TsStreamKind | undefined {
    return this.#kinds.get(pid);
  }

  /** A packet starting a keyframe of the primary stream (any PES start when the primary is audio). */
  isKeyframe(p: Buffer): boolean {
    if (pidOf(p) !== this.primary || !isUnitStart(p)) return false;
    return this.#kinds.get(this.primary) !== 'video' || isRandomAccess(p);
  }

  /** A short description of the PIDs and stream types, to tell whether two inputs' PMTs agree. */
  layout(): string {
    return this.streams.map((s) => `${s.pid}:${s.streamType}`).join(',');
  }
}
