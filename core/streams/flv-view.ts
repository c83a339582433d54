import type { FlvPacket, StreamStopReason } from '../../sdk/index.ts';
import { deliver, stopReader, type FormatView, type ViewReader } from './reader.ts';

/*
 * The FLV view of a stream: what a new reader needs to start at once (metadata, codec headers and
 * the packets since the last keyframe) and the fan-out, one batch per tick to every reader (an
 * RTMP reader writes a batch with one writev).
 */

/** A GOP cache never holds more than this many packets (a stream with no keyframes). */
export const GOP_CAP = 4096;
/** Nor more than this many bytes (a publisher sending huge frames between rare keyframes). */
export const GOP_BYTES_CAP = 64 * 1024 * 1024;

export class FlvView implements FormatView<'flv'> {
  videoCodec = 0;
  audioCodec = 0;
  /** The kinds of media its codec headers show (`known` once both came: a stream of one kind sends one). */
  get media(): { video: boolean; audio: boolean; known: boolean } {
    const video = this.videoCodec !== 0;
    const audio = this.audioCodec !== 0;
    return { video, audio, known: video && audio };
  }
  #readers = new Set<ViewReader<'flv'>>();
  #meta?: FlvPacket;
  #audioHeader?: FlvPacket;
  #videoHeader?: FlvPacket;
  #gop: FlvPacket[] = [];
  #gopBytes = 0;
  /** This tick's packets, written to every reader at once on the next tick. */
  #batch: FlvPacket[] = [];
  #closed = false;

  get size(): number {
    return this.#readers.size;
  }

  readers(): IterableIterator<ViewReader<'flv'>> {
    return this.#readers.values();
  }

  /** Packets held for new readers and for this tick's writes. */
  get held(): { gop: number; gopBytes: number; batch: number } {
    return { gop: this.#gop.length, gopBytes: this.#gopBytes, batch: this.#batch.length };
  }

  push(p: FlvPacket): void {
    if (this.#closed) return;
    this.#keep(p);
    if (this.#readers.size === 0) return;
    this.#batch.push(p);
    if (this.#batch.length === 1) process.nextTick(this.#flush);
  }

  #keep(p: FlvPacket): void {
    switch (p.kind) {
      case 'metadata': this.#meta = p; break;
      case 'audio-header': this.#audioHeader = p; this.audioCodec = p.codec; break;
      case 'video-header': this.#videoHeader = p; this.videoCodec = p.codec; break;
      case 'keyframe': this.#gop = [p]; this.#gopBytes = p.body.length; break;
      case 'frame':
        // frames before the first keyframe cannot start a decoder; audio-only streams have none
        if (this.#gop.length > 0 || !this.#videoHeader) {
          this.#gop.push(p);
          this.#gopBytes += p.body.length;
        }
        if (this.#gop.length > GOP_CAP || this.#gopBytes > GOP_BYTES_CAP) {
          this.#gop = [];
          this.#gopBytes = 0;
        }
        break;
    }
  }

  /** The packets of this tick so far, to every reader (a reader that fails is dropped). */
  #flush = (): void => {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    for (const r of this.#readers) {
      if (!deliver(r, batch)) this.#drop(r);
    }
  };

  #drop(r: ViewReader<'flv'>): void {
    if (this.#readers.delete(r)) stopReader(r, 'dropped');
  }

  /**
   * Metadata, then the video header before the audio header (a demuxer numbers the tracks in the
   * order their first tags come: video is #0 and audio #1, as the reference serves them and as
   * clients that map `0:0` as video expect), then the GOP.
   */
  primer(): FlvPacket[] {
    return [this.#meta, this.#videoHeader, this.#audioHeader, ...this.#gop].filter((p) => p !== undefined);
  }

  /** Adds a reader, starting it with the stored metadata, headers and the current GOP. */
  join(r: ViewReader<'flv'>): void {
    if (this.#closed) return stopReader(r, 'ended');
    // the readers already there get this tick's packets first: they are in the GOP the new one gets
    this.#flush();
    const start = this.primer();
    this.#readers.add(r);
    if (!deliver(r, start)) this.#drop(r);
  }

  leave(r: ViewReader<'flv'>): boolean {
    return this.#readers.delete(r);
  }

  close(reason: StreamStopReason): void {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    const readers = [...this.#readers];
    this.#readers.clear();
    this.#gop = [];
    this.#gopBytes = 0;
    this.#meta = this.#audioHeader = this.#videoHeader = undefined;
    for (const r of readers) stopReader(r, reason);
  }
}
