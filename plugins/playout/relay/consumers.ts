// The loopback listener the supervised ffmpeg connects to (`-f mpegts -i tcp://127.0.0.1:<port>`).
// Every consumer starts at a keyframe with the current PAT/PMT in front; one that reads too slowly loses
// packets up to the next keyframe instead of letting its buffer grow without bound.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';

/** Buffered bytes above which a consumer drops until the next keyframe, and below which it resumes. */
export const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;

interface Consumer {
  socket: Socket;
  pending: Buffer[];
  pendingBytes: number;
  started: boolean;
  /** Dropping since the buffer overflowed: packets until the next keyframe count as drops. */
  dropping: boolean;
}

export class Consumers {
  #server: Server;
  #port: number;
  #log: Logger;
  #tables: () => Buffer[];
  #clients = new Set<Consumer>();
  /** Packets not delivered because a consumer was too slow. */
  drop = 0;

  constructor(port: number, log: Logger, tables: () => Buffer[]) {
    this.#port = port;
    this.#log = log;
    this.#tables = tables;
    this.#server = createServer((socket) => this.#accept(socket));
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        // an accept failure later on (EMFILE...) must not bring the service down
        this.#server.on('error', (err) => this.#log.warn({ err: err.message }, 'playout listener error'));
        resolve();
      });
    });
  }

  get count(): number {
    return this.#clients.size;
  }

  /** Packets buffered for the slowest consumer. */
  queue(): number {
    let max = 0;
    for (const c of this.#clients) max = Math.max(max, c.socket.writableLength + c.pendingBytes);
    return Math.floor(max / 188);
  }

  #accept(socket: Socket): void {
    const c: Consumer = { socket, pending: [], pendingBytes: 0, started: false, dropping: false };
    socket.setNoDelay(true);
    socket.resume(); // a consumer sends nothing we need
    socket.on('error', (err) => this.#log.debug({ err: err.message }, 'playout consumer error'));
    socket.on('close', () => this.#clients.delete(c));
    this.#clients.add(c);
    this.#log.debug({ consumers: this.#clients.size }, 'playout consumer connected');
  }

  /** Queues one output packet for every consumer (sent on `flush`). */
  packet(p: Buffer, key: boolean): void {
    for (const c of this.#clients) {
      if (!c.started) {
        if (!key || c.socket.writableLength >= LOW_WATER) {
          if (c.dropping) this.drop++;
          continue;
        }
        for (const t of this.#tables()) this.#push(c, t);
        c.started = true;
        c.dropping = false;
      } else if (c.socket.writableLength + c.pendingBytes > HIGH_WATER) {
        c.started = false;
        c.dropping = true;
        this.drop++;
        continue;
      }
      this.#push(c, p);
    }
  }

  #push(c: Consumer, p: Buffer): void {
    c.pending.push(p);
    c.pendingBytes += p.length;
  }

  /** Writes what `packet` queued, one write per consumer. */
  flush(): void {
    for (const c of this.#clients) {
      if (c.pending.length === 0) continue;
      const buf = c.pending.length === 1 ? Buffer.from(c.pending[0]!) : Buffer.concat(c.pending, c.pendingBytes);
      c.pending = [];
      c.pendingBytes = 0;
      if (!c.socket.destroyed) c.socket.write(buf);
    }
  }

  close(): Promise<void> {
    for (const c of this.#clients) c.socket.destroy();
    this.#clients.clear();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
