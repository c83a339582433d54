import type { Duplex } from 'node:stream';

/*
 * `http.send_timeout_seconds` (nginx's `send_timeout`): a connection with output waiting whose
 * client has taken no byte of it for that long is closed. A paused download otherwise holds its
 * buffers, its file descriptor and its place under the per-address limit for as long as the client
 * likes (3,527 paused downloads from 16 addresses held 692 MB). Progress is what the kernel took:
 * `bytesWritten - writableLength` (bytes handed to the socket); a connection with nothing waiting
 * is idle, not stalled (a quiet event stream, a kept-alive connection: their own timeouts apply).
 * One timer per listener set, running only while connections are open; allocation-free per check.
 */

interface Watched {
  sent: number;
  stalledMs: number;
}

/** How often the connections are looked at: a quarter of the limit, at most 5 s (a stall is cut within this much after it). */
const tickOf = (limitMs: number) => Math.min(5000, Math.max(250, Math.floor(limitMs / 4)));

export class SendStall {
  #limitMs: number;
  readonly #live = new Map<Duplex, Watched>();
  #timer: NodeJS.Timeout | undefined;

  constructor(limitMs: number) {
    this.#limitMs = limitMs;
  }

  /** A new limit for the connections open and to come (0: none). */
  update(limitMs: number): void {
    this.#limitMs = limitMs;
  }

  /** Watches a new connection until it closes. */
  watch(socket: Duplex): void {
    this.#live.set(socket, { sent: 0, stalledMs: 0 });
    socket.once('close', () => {
      this.#live.delete(socket);
      if (this.#live.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    });
    if (!this.#timer) {
      const tick = tickOf(this.#limitMs);
      this.#timer = setInterval(() => this.check(tick), tick).unref();
    }
  }

  /** One look at every connection, `elapsedMs` after the last; closes those stalled past the limit. Exposed for tests. */
  check(elapsedMs: number): void {
    const limit = this.#limitMs;
    for (const [socket, w] of this.#live) {
      const s = socket as Duplex & { bytesWritten?: number };
      const waiting = s.writableLength;
      const sent = (s.bytesWritten ?? 0) - waiting;
      if (waiting === 0 || sent !== w.sent) {
        w.sent = sent;
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
