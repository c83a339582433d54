// The error frame of one relay: the image (or slate), its clip encoded for the current source
// parameters, and the loop that sends the clip through the splicer, paced to the wall clock.
import type { Logger } from 'pino';
import { DEFAULT_PARAMS, encodeClip } from './clip.ts';
import { ClipLoop } from './clip-loop.ts';
import type { Splicer } from './splicer.ts';
import { describeParams, type StreamParams } from './stream-params.ts';
import type { Ffmpeg } from './ffmpeg.ts';

/** How far ahead of the clock the clip is sent, so the consumer never starves between ticks. */
const LEAD_S = 0.3;

export class ErrorFrame {
  image: Buffer | undefined;
  /** Clip encodes done, clip frames sent. */
  enc = 0;
  dup = 0;
  #ffmpeg: Ffmpeg;
  #label: string;
  #log: Logger;
  #clip: ClipLoop | undefined;
  /** What the current clip was encoded for, as describeParams says it ('' before the first). */
  clipFor = '';
  #encoding: Promise<void> = Promise.resolve();
  #loop = { clip: undefined as ClipLoop | undefined, idx: 0, base: 0, anchor: 0 };
  #closed = false;

  constructor(ffmpeg: Ffmpeg, label: string, log: Logger, image: Buffer | undefined) {
    this.#ffmpeg = ffmpeg;
    // drawtext expands `%{...}` and the slate text is the only use of the label
    this.#label = label.replace(/[%\\]/g, '');
    this.#log = log;
    this.image = image;
  }

  /** Whether a clip is there to loop. */
  get ready(): boolean {
    return this.#clip?.ready === true;
  }

  /** Encodes the clip for `params` (the default slate's when none); encodes run one after another. */
  encode(params: StreamParams | undefined): Promise<void> {
    const job = this.#encoding.then(async () => {
      if (this.#closed) return;
      const p = params ?? DEFAULT_PARAMS;
      const ts = await encodeClip({ ffmpeg: this.#ffmpeg, params: p, image: this.image, label: this.#label, text: true });
      this.enc++;
      this.#clip = new ClipLoop(ts);
      this.clipFor = describeParams(p);
    });
    this.#encoding = job.catch((err: Error) => this.#log.warn({ err: err.message }, 'playout error frame encode failed'));
    return job;
  }

  /** Starts looping; `anchor` is the wall clock the output timeline was last at. False without a clip. */
  start(anchor: number): boolean {
    if (!this.#clip?.ready) return false;
    this.#loop = { clip: this.#clip, idx: 0, base: 0, anchor };
    return true;
  }

  /** Feeds the clip packets due by now (plus the lead); a new clip takes over at a pass boundary. */
  pump(now: number, splicer: Splicer): void {
    const l = this.#loop;
    const allowed = (now - l.anchor) / 1000 + LEAD_S;
    for (;;) {
      if (l.idx === 0 && this.#clip && this.#clip !== l.clip && this.#clip.ready) l.clip = this.#clip;
      const clip = l.clip!;
      if (l.base + clip.due[l.idx]! > allowed) break;
      if (l.idx === 0) splicer.begin(clip.input);
      if (clip.isFrame(l.idx)) this.dup++;
      splicer.feed(Buffer.from(clip.packets[l.idx]!));
      if (++l.idx === clip.packets.length) { l.idx = 0; l.base += clip.duration; }
    }
  }

  /** No more encodes; resolves once a running one is done (no child left behind). */
  close(): Promise<void> {
    this.#closed = true;
    return this.#encoding;
  }
}
