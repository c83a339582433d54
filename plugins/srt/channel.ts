import { TS_PACKET, isRandomAccess, isVideo, parsePat, parsePmt, pidOf, type TsTrack } from './mpegts.ts';

/** What a channel needs of a subscriber's socket: queue bytes, learn how many went. */
export interface ChannelSink {
  readonly sock: number;
  /** Bytes queued so far, and bytes dropped because its send buffer was full. */
  sent: number;
  dropped: number;
  /** True once it got PAT/PMT and a keyframe: from then on it gets every chunk. */
  started: boolean;
  /** Chunks in a row its send buffer refused entirely. */
  stalls?: number;
}

/** Chunks in a row a subscriber may refuse before it is dropped (about a second of media). */
export const MAX_STALLS = 250;

export type SendFn = (sock: number, data: Buffer) => number;

/**
 * One published stream: its publisher's MPEG-TS goes to every subscriber. A new subscriber
 * starts with the cached PAT and PMT at the next video random access point (or at once when
 * the stream has no video), so its decoder never starts mid-GOP.
 */
export class Channel {
  readonly name: string;
  readonly publisher: number;
  readonly subscribers = new Map<number, ChannelSink>();
  #pat: Buffer | undefined;
  #pmtPids = new Set<number>();
  #pmt = new Map<number, Buffer>();
  #tracks: TsTrack[] = [];
  #send: SendFn;

  #onStall: (sock: number) => void;

  /** `onStall`: a subscriber stayed behind for MAX_STALLS chunks; the owner closes it. */
  constructor(name: string, publisher: number, send: SendFn, onStall: (sock: number) => void = () => {}) {
    this.name = name;
    this.publisher = publisher;
    this.#send = send;
    this.#onStall = onStall;
  }

  get tracks(): readonly TsTrack[] {
    return this.#tracks;
  }

  /** Takes one chunk from the publisher (whole TS packets, as SRT carries them). */
  feed(chunk: Buffer): void {
    let entry = -1;
    const videoPid = this.#tracks.find(isVideo)?.pid;
    for (let o = 0; o + TS_PACKET <= chunk.length; o += TS_PACKET) {
      if (chunk[o] !== 0x47) continue;
      const pid = pidOf(chunk, o);
      if (pid === 0) {
        this.#pat = Buffer.from(chunk.subarray(o, o + TS_PACKET));
        this.#pmtPids = new Set(parsePat(chunk, o));
      } else if (this.#pmtPids.has(pid)) {
        this.#pmt.set(pid, Buffer.from(chunk.subarray(o, o + TS_PACKET)));
        this.#tracks = parsePmt(chunk, o);
      } else if (entry < 0 && pid === videoPid && isRandomAccess(chunk, o)) {
        entry = o;
      }
    }
    const hasVideo = videoPid !== undefined;
    for (const sub of this.subscribers.values()) {
      if (sub.started) {
        this.#deliver(sub, chunk);
      } else if (this.#pat && this.#pmt.size > 0 && (entry >= 0 || !hasVideo)) {
        sub.started = true;
        this.#deliver(sub, Buffer.concat([this.#pat, ...this.#pmt.values(), chunk.subarray(Math.max(entry, 0))]));
      }
    }
  }

  #deliver(sub: ChannelSink, data: Buffer): void {
    const n = this.#send(sub.sock, data);
    sub.sent += n;
    sub.dropped += data.length - n;
    sub.stalls = n === 0 ? (sub.stalls ?? 0) + 1 : 0;
    if (sub.stalls === MAX_STALLS) this.#onStall(sub.sock);
  }
}
