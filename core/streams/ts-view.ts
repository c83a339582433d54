import type { StreamStopReason } from '../../sdk/index.ts';
import { TS_PACKET, isAudioType, isRandomAccess, isVideoType, parsePat, parsePmt, pidOf } from './mpegts.ts';
import { deliver, stopReader, type FormatView, type ViewReader } from './reader.ts';

/*
 * The MPEG-TS view of a stream: every chunk (whole TS packets) goes to every started reader as
 * it comes. A new reader waits for the next video random access point (or starts at once when
 * the stream has no video) and gets the cached PAT and PMT first, so its decoder never starts
 * mid-GOP. A reader that joins before the stream's first PAT starts at once.
 */

export class TsView implements FormatView<'mpegts'> {
  /** The kinds of media the last PMT lists (`known` from the first PMT on). */
  readonly media = { video: false, audio: false, known: false };
  #readers = new Set<ViewReader<'mpegts'>>();
  /** Readers not started yet (kept apart so the hot path only walks started ones). */
  #waiting = new Set<ViewReader<'mpegts'>>();
  #pat: Buffer | undefined;
  #pmtPids = new Set<number>();
  #pmt = new Map<number, Buffer>();
  #videoPid: number | undefined;
  #closed = false;

  get size(): number {
    return this.#readers.size + this.#waiting.size;
  }

  *readers(): IterableIterator<ViewReader<'mpegts'>> {
    yield* this.#readers;
    yield* this.#waiting;
  }

  push(chunk: Buffer): void {
    if (this.#closed) return;
    const entry = this.#scan(chunk);
    const one = [chunk];
    for (const r of this.#readers) if (!deliver(r, one)) this.#drop(r);
    if (this.#waiting.size === 0 || !this.#pat || this.#pmt.size === 0) return;
    if (entry < 0 && this.#videoPid !== undefined) return;
    const start = [this.#pat, ...this.#pmt.values(), entry > 0 ? chunk.subarray(entry) : chunk];
    for (const r of this.#waiting) {
      this.#waiting.delete(r);
      r.started = true;
      this.#readers.add(r);
      if (!deliver(r, start)) this.#drop(r);
    }
  }

  /** Caches PAT/PMT of a chunk; the offset of its first video random access point, or -1. */
  #scan(chunk: Buffer): number {
    let entry = -1;
    for (let o = 0; o + TS_PACKET <= chunk.length; o += TS_PACKET) {
      if (chunk[o] !== 0x47) continue;
      const pid = pidOf(chunk, o);
      if (pid === 0) {
        this.#pat = Buffer.from(chunk.subarray(o, o + TS_PACKET));
        this.#pmtPids = new Set(parsePat(chunk, o));
      } else if (this.#pmtPids.has(pid)) {
        this.#pmt.set(pid, Buffer.from(chunk.subarray(o, o + TS_PACKET)));
        const streams = parsePmt(chunk, o);
        this.#videoPid = streams.find((t) => isVideoType(t.streamType))?.pid;
        if (streams.length > 0) {
          this.media.video = this.#videoPid !== undefined;
          this.media.audio = streams.some((t) => isAudioType(t.streamType));
          this.media.known = true;
        }
      } else if (entry < 0 && pid === this.#videoPid && isRandomAccess(chunk, o)) {
        entry = o;
      }
    }
    return entry;
  }

  primer(): Buffer[] {
    return this.#pat ? [this.#pat, ...this.#pmt.values()] : [];
  }

  #drop(r: ViewReader<'mpegts'>): void {
    if (this.#readers.delete(r) || this.#waiting.delete(r)) stopReader(r, 'dropped');
  }

  /**
   * A reader joining before the stream's first PAT starts at once: it sees the stream from its
   * start (nothing was sent yet that a decoder could sync on); later ones wait for a random access point.
   */
  join(r: ViewReader<'mpegts'>): void {
    if (this.#closed) return stopReader(r, 'ended');
    r.started = this.#pat === undefined;
    (r.started ? this.#readers : this.#waiting).add(r);
  }

  leave(r: ViewReader<'mpegts'>): boolean {
    return this.#readers.delete(r) || this.#waiting.delete(r);
  }

  close(reason: StreamStopReason): void {
    if (this.#closed) return;
    this.#closed = true;
    const readers = [...this.readers()];
    this.#readers.clear();
    this.#waiting.clear();
    this.#pat = undefined;
    this.#pmt.clear();
    for (const r of readers) stopReader(r, reason);
  }
}
