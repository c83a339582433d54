// The last keyframe of the source as an image: the packets of its access unit (with PAT/PMT in front)
// are kept as they pass, and decoded only when someone asks.
import type { Ffmpeg } from './ffmpeg.ts';

/** Keeps the packets of the last complete keyframe access unit of the primary (video) stream. */
export class KeyframeKeeper {
  #collecting: Buffer[] | undefined;
  #bytes = 0;
  #last: Buffer[] | undefined;
  static readonly LIMIT = 8 * 1024 * 1024;

  /** A primary packet; `unitStart` when it starts a frame, `key` when that frame is a keyframe. */
  primary(p: Buffer, unitStart: boolean, key: boolean, tables: (Buffer | undefined)[]): void {
    if (unitStart) {
      if (this.#collecting) this.#last = this.#collecting;
      this.#collecting = undefined;
      if (key) {
        this.#collecting = tables.filter((t): t is Buffer => t !== undefined).map((t) => Buffer.from(t));
        this.#bytes = 0;
      }
    }
    if (!this.#collecting) return;
    this.#bytes += p.length;
    if (this.#bytes > KeyframeKeeper.LIMIT) { this.#collecting = undefined; return; }
    this.#collecting.push(Buffer.from(p));
  }

  /** The last complete access unit (or the one being collected) as a TS buffer. */
  get(): Buffer | undefined {
    const au = this.#last ?? this.#collecting;
    return au ? Buffer.concat(au) : undefined;
  }
}

/** Decodes the first video frame of a TS buffer to jpg or png; undefined if ffmpeg cannot. */
export function decodeKeyframe(ffmpeg: Ffmpeg, ts: Buffer, kind: 'jpg' | 'png'): Promise<Buffer | undefined> {
  const codec = kind === 'png' ? ['-c:v', 'png'] : ['-c:v', 'mjpeg', '-q:v', '3'];
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error', '-f', 'mpegts', '-i', 'pipe:0',
    '-frames:v', '1', '-map', '0:v:0', ...codec, '-f', 'image2pipe', 'pipe:1'];
  return new Promise((resolve) => {
    let child;
    try {
      child = ffmpeg.spawn(ffmpeg.binary, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      resolve(undefined);
      return;
    }
    const out: Buffer[] = [];
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 && out.length > 0 ? Buffer.concat(out) : undefined));
    child.stdin!.on('error', () => { /* ffmpeg may stop reading early */ });
    child.stdin!.end(ts);
  });
}
