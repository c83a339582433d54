import type { ChildProcess } from 'node:child_process';

/*
 * The error frame of a waiting on-demand process: a short dark MPEG-TS clip (video and silent
 * audio) a player can show while ffmpeg starts, and the small live playlist that lists it.
 * Encoded once with ffmpeg at first need and kept in memory.
 */

/** Seconds of one slate segment. */
export const SLATE_SECONDS = 1;
/** The first line after `#EXTM3U` of a waiting playlist: tells it from ffmpeg's. */
export const WAITING_MARK = '## on demand: waiting for the process to start';

type Spawn = (binary: string, args: readonly string[], opts: { stdio: ['ignore', 'pipe', 'ignore'] }) => ChildProcess;

const ARGS = [
  '-hide_banner', '-nostdin', '-loglevel', 'error',
  '-f', 'lavfi', '-i', `color=c=0x101010:s=320x180:r=25:d=${SLATE_SECONDS}`,
  '-f', 'lavfi', '-i', `anullsrc=r=48000:cl=stereo`,
  '-t', String(SLATE_SECONDS), '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-g', '25',
  '-c:a', 'aac', '-b:a', '32k', '-f', 'mpegts', 'pipe:1',
];

/** The slate clip, encoded by the first caller and shared (a failed encode is tried again next time). */
export class Slate {
  readonly #spawn: Spawn;
  readonly #binary: string;
  #clip: Promise<Buffer> | undefined;

  constructor(binary: string, spawn: Spawn) {
    this.#binary = binary;
    this.#spawn = spawn;
  }

  clip(): Promise<Buffer> {
    this.#clip ??= this.#encode().catch((err: unknown) => {
      this.#clip = undefined;
      throw err;
    });
    return this.#clip;
  }

  #encode(): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const child = this.#spawn(this.#binary, ARGS, { stdio: ['ignore', 'pipe', 'ignore'] });
      const chunks: Buffer[] = [];
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.stdout?.on('data', (c: Buffer) => chunks.push(c));
      child.once('error', (err) => { clearTimeout(timer); reject(err); });
      child.once('close', (code) => {
        clearTimeout(timer);
        const out = Buffer.concat(chunks);
        if (code === 0 && out.length > 0) resolve(out);
        else reject(new Error(`the slate encode ended with ${code}`));
      });
    });
  }
}

/**
 * A live playlist of slate segments (no `#EXT-X-ENDLIST`, so a player keeps asking), numbered
 * from the clock so a reload looks like a live stream moving on.
 */
export function waitingPlaylist(slateUri: string, now: number): string {
  const seq = Math.floor(now / (SLATE_SECONDS * 1000));
  const lines = ['#EXTM3U', WAITING_MARK, '#EXT-X-VERSION:3', `#EXT-X-TARGETDURATION:${SLATE_SECONDS}`, `#EXT-X-MEDIA-SEQUENCE:${seq}`];
  for (let i = 0; i < 3; i++) {
    // every copy of the clip starts its timestamps again
    if (i > 0) lines.push('#EXT-X-DISCONTINUITY');
    lines.push(`#EXTINF:${SLATE_SECONDS.toFixed(3)},`, `${slateUri}?n=${seq + i}`);
  }
  return `${lines.join('\n')}\n`;
}
