// The source-side figures of the status (packets, media time, bytes, GOP length) and the last keyframe,
// gathered as packets arrive from the current source run.
import { KeyframeKeeper } from './keyframe.ts';
import type { TsInput } from './ts-input.ts';
import { isUnitStart, pidOf, readPesStamps } from './ts-packet.ts';

export class SourceStats {
  /** Frames (PES) read, seconds of media read, bytes read. */
  packets = 0;
  time = 0;
  bytes = 0;
  /** Frames in the last complete GOP, as the API's string. */
  gop = '';
  readonly keyframe = new KeyframeKeeper();
  #input: TsInput | undefined;
  #lastDts = -1;
  #sinceKey = -1;

  /** One media packet of the current source (`input` is that run's table tracker). */
  observe(input: TsInput, p: Buffer): void {
    this.bytes += p.length;
    if (input !== this.#input) { this.#input = input; this.#lastDts = -1; this.#sinceKey = -1; }
    const pid = pidOf(p);
    const start = isUnitStart(p);
    if (start && input.kindOf(pid) !== undefined) this.packets++;
    if (pid !== input.primary) return;
    const key = start && input.isKeyframe(p);
    if (input.kindOf(pid) === 'video') this.keyframe.primary(p, start, key, [input.pat, input.pmt]);
    if (!start) return;
    if (key) {
      if (this.#sinceKey > 0) this.gop = String(this.#sinceKey);
      this.#sinceKey = 0;
    }
    if (this.#sinceKey >= 0) this.#sinceKey++;
    const st = readPesStamps(p);
    if (!st) return;
    const d = st.dts - this.#lastDts;
    if (this.#lastDts >= 0 && d > 0 && d < 90_000) this.time += d / 90_000;
    this.#lastDts = st.dts;
  }
}
