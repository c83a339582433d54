import type { Duplex } from 'node:stream';

/*
 * `http.send_timeout_seconds` (nginx's `send_timeout`): a connection with output waiting whose
 * client has taken no byte of it for that long is closed. A paused download otherwise holds its
 * buffers, its file descriptor and its place under the per-address limit for as long as the client
 * likes (3,527 paused downloads from 16 addresses held 692 MB). Progress is what the kernel took:
 * `bytesWritten - writableLength` (bytes handed to the socket); a connection with nothing waiting
 * is idle, not stalled (a quiet event stream, a kept-alive connection: their own timeouts apply).
 * HTTPS connections are watched on their TCP socket: what TLS encrypted waits in its handle's queue.
 * One timer per listener set, running only while connections are open; allocation-free per check.
 */

interface Watched {
  sent: number;
  queued: number;
  stalledMs: number;
}

/** How often the connections are looked at: a quarter of the limit, at most 5 s (a stall is cut within this much after it). */
const tickOf = (limitMs: number) => Math.min(5000, Math.max(250, Math.floor(limitMs / 4)));

/** A socket as the watch reads it: node's counters and its handle's queue (libuv's, of a TCP socket under TLS too). */
type Watchable = Duplex & { bytesWritten?: number; _handle?: { writeQueueSize?: number } | null };

export class SendStall {
  #limitMs: number;
  readonly #live = new Map<Duplex, Watched>();
  #timer: NodeJS.Timeout | undefined;
  #tick = 0;

  constructor(limitMs: number) {
    this.#limitMs = limitMs;
  }

  /** A new limit for the connections open and to come (0: none, and no timer). */
  update(limitMs: number): void {
    this.#limitMs = limitMs;
    this.#arm();
  }

  /**
   * Watches a new connection until it closes: the TCP socket a TLS connection runs on serves (the
   * encrypted bytes wait in its handle's queue).
   */
  watch(socket: Duplex): void {
    this.#live.set(socket, { sent: 0, queued: 0, stalledMs: 0 });
    socket.once('close', () => {
      this.#live.delete(socket);
      if (this.#live.size === 0) this.#arm();
    });
    this.#arm();
  }

  /** The timer runs while connections are open and a limit is set, at the limit's tick. */
  #arm(): void {
    const tick = this.#live.size > 0 && this.#limitMs > 0 ? tickOf(this.#limitMs) : 0;
    if (tick === this.#tick) return;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = tick ? setInterval(() => this.check(tick), tick).unref() : undefined;
    this.#tick = tick;
  }

  /**
   * One look at every connection, `elapsedMs` after the last; closes those stalled past the limit.
   * Progress is a write node finished (`bytesWritten - writableLength` grew) or a change of what
   * waits in the handle's queue (the kernel took part of one large write: an in-memory file is
   * sent whole by one `end`). Exposed for tests.
   */
  check(elapsedMs: number): void {
    const limit = this.#limitMs;
    for (const [socket, w] of this.#live) {
      const s = socket as Watchable;
      const queued = s._handle?.writeQueueSize ?? 0;
      const sent = (s.bytesWritten ?? 0) - s.writableLength;
      if (s.writableLength + queued === 0 || sent !== w.sent || queued !== w.queued) {
        w.sent = sent;
        w.queued = queued;
        w.stalledMs = 0;
        continue;
      }
      w.stalledMs += elapsedMs;
      if (limit > 0 && w.stalledMs >= limit) socket.destroy();
    }
  }

  /** Connections watched (tests). */
  get size(): number {
    return this.#live.size;
  }
}
