// The encoded error-frame clip as packets with their media time, ready to be looped: each pass is a
// new splicer segment (so its timestamps continue the output), paced by the caller against the clock.
import { TsInput } from './ts-input.ts';
import { isUnitStart, pidOf, readPesStamps, splitPackets } from './ts-packet.ts';

export class ClipLoop {
  readonly input = new TsInput();
  readonly packets: Buffer[] = [];
  /** Seconds from the clip's start at which each packet is due. */
  readonly due: number[] = [];
  /** Seconds one pass lasts (primary frames times the frame duration). */
  readonly duration: number;
  /** Primary (video) frames in one pass. */
  readonly frames: number;

  constructor(ts: Buffer) {
    splitPackets(ts, this.packets);
    for (const p of this.packets) this.input.observeTables(p);
    const primary = this.input.primary;
    let base = -1;
    let last = 0;
    let prevPrimary = -1;
    let frameDur = 3600;
    let lastPrimary = 0;
    let frames = 0;
    for (const p of this.packets) {
      const st = isUnitStart(p) ? readPesStamps(p) : null;
      if (st) {
        if (base < 0) base = st.dts;
        last = Math.max(0, st.dts - base);
        if (pidOf(p) === primary) {
          frames++;
          if (prevPrimary >= 0 && st.dts > prevPrimary) frameDur = st.dts - prevPrimary;
          prevPrimary = st.dts;
          lastPrimary = st.dts - base;
        }
      }
      this.due.push(last / 90_000);
    }
    this.frames = frames;
    this.duration = Math.max(0.04, (lastPrimary + frameDur) / 90_000);
  }

  get ready(): boolean {
    return this.input.ready && this.packets.length > 0;
  }

  /** Whether packet `i` starts a frame of the primary stream (a duplicated error frame). */
  isFrame(i: number): boolean {
    const p = this.packets[i]!;
    return pidOf(p) === this.input.primary && isUnitStart(p);
  }
}
