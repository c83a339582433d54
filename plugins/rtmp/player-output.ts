import type { Socket } from 'node:net';
import type { FlvPacket } from '../../sdk/index.ts';

/*
 * What one player has not been sent yet. The packets are the stream table's (one per publisher
 * message), shared by every player and never copied; what goes to the socket is each packet's
 * RTMP encoding (`wire`, made once by the wire layer and shared too).
 *
 * Why not just `socket.write` each packet: a socket that cannot take more (a slow or stalled
 * player, or a busy box where the players' process reads late) keeps every write as an entry
 * of its Writable queue, a JS object per packet per player. Measured (bench/rtmp/players-memory.ts
 * --stall=50): 500 stalled players grew the service's JS heap from 114 to 223 MB with those
 * entries, and V8 kept it after the players left. Here a full socket's packets wait in a plain
 * array (one slot, 8 bytes, per packet) and go out a slice per `drain`, each slice one writev.
 */

/** At most this much of a queue goes to the socket per `drain`, so its Writable never holds many entries. */
export const SLICE_BYTES = 256 * 1024;

/** The RTMP chunks of a packet (its cached `wire`, made on first use). */
export type WireOf = (p: FlvPacket) => Buffer;

export class PlayerOutput {
  readonly #socket: Socket;
  readonly #wire: WireOf;
  /** Most bytes a player may be behind (this queue and the socket's unsent bytes together). */
  readonly #cap: number;
  #queue: FlvPacket[] = [];
  /** The first packet of `#queue` not yet written. */
  #head = 0;
  #queued = 0;
  #waiting = false;
  #written = 0;

  constructor(socket: Socket, cap: number, wire: WireOf) {
    this.#socket = socket;
    this.#wire = wire;
    this.#cap = cap;
    socket.on('drain', () => { if (this.#waiting) this.flush(); });
    socket.once('close', () => this.clear());
  }

  /** Bytes waiting here (not yet handed to the socket). */
  get queued(): number {
    return this.#queued;
  }

  /** Packets waiting here: the stream's own packets, in order. */
  get pending(): readonly FlvPacket[] {
    return this.#queue.slice(this.#head);
  }

  /** Bytes handed to the socket so far. */
  get written(): number {
    return this.#written;
  }

  /**
   * Sends one batch (the packets of one publisher read, or a new player's start). False when the
   * player is more than the cap behind: nothing more is kept for it, and the caller drops it.
   */
  send(batch: readonly FlvPacket[]): boolean {
    if (this.#socket.destroyed) return false;
    if (!this.#waiting && this.#queued === 0) {
      this.#write(batch);
      return true;
    }
    for (const p of batch) {
      this.#queue.push(p);
      this.#queued += this.#wire(p).length;
    }
    if (this.#queued + this.#socket.writableLength <= this.#cap) return true;
    this.clear();
    return false;
  }

  /**
   * Hands queued packets to the socket, a slice at a time until the socket is full again (at
   * `drain`); with `all`, everything at once (before the connection ends).
   */
  flush(all = false): void {
    this.#waiting = false;
    while (this.#queued > 0 && !this.#waiting) {
      if (this.#socket.destroyed) return this.clear();
      let end = this.#head;
      let bytes = 0;
      while (end < this.#queue.length && (all || bytes < SLICE_BYTES)) bytes += this.#wire(this.#queue[end++]!).length;
      const slice = this.#queue.slice(this.#head, end);
      this.#queued -= bytes;
      this.#head = end;
      if (this.#head === this.#queue.length) this.clear();
      // a player always behind never empties the queue: the written part is let go now and then
      else if (this.#head >= 1024 && this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.#write(slice);
    }
  }

  /** Drops what is queued (the connection is gone or the player is dropped). */
  clear(): void {
    this.#queue = [];
    this.#head = 0;
    this.#queued = 0;
  }

  // one writev for the batch; once the socket is above its high-water mark, queue until `drain`
  #write(batch: readonly FlvPacket[]): void {
    if (batch.length === 0) return;
    const s = this.#socket;
    s.cork();
    for (const p of batch) {
      const b = this.#wire(p);
      s.write(b);
      this.#written += b.length;
    }
    s.uncork();
    this.#waiting = s.writableNeedDrain;
  }
}
