import type { Socket } from 'node:net';
import { encodeFields } from './protocol.ts';

/*
 * Frames between the service and its SRT host program, on one pipe (fd 3 of the host; the
 * kinds: protocol.ts): binary, no serialisation. A frame is `kind` (u8), `count` (u16), `length`
 * (u32), then `count` ids (u32 each), then `length` bytes. Media frames: PUBLISHED (host ->
 * service, one publisher's chunk) and DELIVER (service -> host, one chunk of the stream table for
 * `count` subscribers, so a chunk shared by many SRT readers crosses once).
 */

const HEAD = 7;
/** A frame announcing more is not ours (a chunk is at most a few MiB). */
const MAX_FRAME = 64 * 1024 * 1024;
/** Bytes the pipe may hold unsent before frames are dropped (the other side is stuck). */
export const MAX_BACKLOG = 32 * 1024 * 1024;

export type FrameHandler = (kind: number, socks: readonly number[], data: Buffer) => void;

/** Writes one media frame; false when the pipe is too far behind and the frame was dropped. */
export function writeFrame(pipe: Socket, kind: number, socks: readonly number[], data: Buffer): boolean {
  if (pipe.destroyed || pipe.writableLength > MAX_BACKLOG) return false;
  put(pipe, kind, socks, data);
  return true;
}

/** Writes one control frame of `fields` (never dropped: control frames are few and small). */
export function writeControl(pipe: Socket, kind: number, ids: readonly number[], fields: readonly string[] = []): void {
  if (!pipe.destroyed) put(pipe, kind, ids, encodeFields(fields));
}

function put(pipe: Socket, kind: number, socks: readonly number[], data: Buffer): void {
  const head = Buffer.allocUnsafe(HEAD + 4 * socks.length);
  head.writeUInt8(kind, 0);
  head.writeUInt16BE(socks.length, 1);
  head.writeUInt32BE(data.length, 3);
  for (let i = 0; i < socks.length; i++) head.writeUInt32BE(socks[i]!, HEAD + 4 * i);
  pipe.cork();
  pipe.write(head);
  pipe.write(data);
  pipe.uncork();
}

/**
 * Frames a stuck pipe dropped: counted, and told once per run of drops (a `warn` line when the first
 * frame of a run is dropped, another with the totals when a frame passes again).
 */
export class PipeDrops {
  frames = 0;
  bytes = 0;
  #run = 0;
  readonly #warn: (fields: Record<string, unknown>, msg: string) => void;
  readonly #side: string;

  constructor(side: string, warn: (fields: Record<string, unknown>, msg: string) => void) {
    this.#side = side;
    this.#warn = warn;
  }

  /** The result of one `writeFrame` of `bytes`. */
  note(written: boolean, bytes: number): void {
    if (written) {
      if (this.#run > 0) this.#warn({ side: this.#side, frames: this.#run, total_frames: this.frames, total_bytes: this.bytes }, 'SRT media pipe flows again after dropping frames');
      this.#run = 0;
      return;
    }
    this.frames++;
    this.bytes += bytes;
    if (this.#run++ === 0) this.#warn({ side: this.#side, backlog_bytes: MAX_BACKLOG }, 'SRT media pipe stuck: dropping frames');
  }
}

/** Reads frames off a pipe; a malformed one ends the reading (`onBroken`). */
export function readFrames(pipe: Socket, onFrame: FrameHandler, onBroken: (why: string) => void): void {
  let pending: Buffer | undefined;
  pipe.on('data', (d: Buffer) => {
    const buf = pending ? Buffer.concat([pending, d]) : d;
    pending = undefined;
    let at = 0;
    while (buf.length - at >= HEAD) {
      const count = buf.readUInt16BE(at + 1);
      const len = buf.readUInt32BE(at + 3);
      if (len > MAX_FRAME) {
        pipe.destroy();
        return onBroken(`a media frame of ${len} bytes`);
      }
      const end = at + HEAD + 4 * count + len;
      if (buf.length < end) break;
      const socks: number[] = [];
      for (let i = 0; i < count; i++) socks.push(buf.readUInt32BE(at + HEAD + 4 * i));
      // the data read from the pipe is a fresh Buffer per read: the chunk is a view, not a copy
      onFrame(buf[at]!, socks, buf.subarray(end - len, end));
      at = end;
    }
    if (at < buf.length) pending = at === 0 ? buf : Buffer.from(buf.subarray(at));
  });
}
