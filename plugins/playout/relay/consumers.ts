// The loopback listener the supervised ffmpeg connects to (`-f mpegts -i tcp://127.0.0.1:<port>`).
// Every consumer starts at a keyframe with the current PAT/PMT in front; one that reads too slowly loses
// packets up to the next keyframe instead of letting its buffer grow without bound.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';

/** Buffered bytes above which a consumer drops until the next keyframe, and below which it resumes. */
export const HIGH_WATER = 4 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;
/** Consumers at once (the process's ffmpeg is one; a reconnect briefly two); more are closed at accept. */
export const MAX_CONSUMERS = 16;
/** A consumer with bytes queued that takes none of them for this long is closed. */
export const STALL_MS = 30_000;

interface Consumer {
  socket: Socket;
  /** `127.0.0.1:<port>` of the consumer, for the log. */
  remote: string;
  pending: Buffer[];
  pendingBytes: number;
  started: boolean;
  /** Dropping since the buffer overflowed: packets until the next keyframe count as drops. */
  dropping: boolean;
  /** Wall clock of the last write the kernel took (or of the accept). */
  progressAt: number;
  /** Why the relay closed it (logged once), unset while it lives or when the consumer left. */
  closedFor?: string;
}

/**
 * The fault boundary of the loopback port: a consumer (the process's ffmpeg) only reads. One that
 * sends a byte, takes nothing of its queue for `stallMs`, or errors is closed with one log line
 * naming its `remote` and the reason; the relay and the other consumers go on.
 */
export class Consumers {
  #server: Server;
  #port: number;
  #log: Logger;
  #tables: () => Buffer[];
  #stallMs: number;
  #clients = new Set<Consumer>();
  /** Packets not delivered because a consumer was too slow. */
  drop = 0;

  constructor(port: number, log: Logger, tables: () => Buffer[], opts: { stallMs?: number } = {}) {
    this.#port = port;
    this.#log = log;
    this.#tables = tables;
    this.#stallMs = opts.stallMs ?? STALL_MS;
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
    const remote = `${socket.remoteAddress}:${socket.remotePort}`;
    socket.on('error', () => {}); // reported by 'close' below
    if (this.#clients.size >= MAX_CONSUMERS) {
      this.#log.warn({ remote }, `playout consumer refused: ${MAX_CONSUMERS} consumers connected`);
      socket.destroy();
      return;
    }
    const c: Consumer = { socket, remote, pending: [], pendingBytes: 0, started: false, dropping: false, progressAt: Date.now() };
    socket.setNoDelay(true);
    socket.on('data', () => this.#end(c, 'it sent data (a consumer only reads)'));
    socket.on('close', (hadError) => this.#gone(c, hadError));
    this.#clients.add(c);
    this.#log.debug({ remote, consumers: this.#clients.size }, 'playout consumer connected');
  }

  /** Closes a consumer for `why` (logged once, when it goes). */
  #end(c: Consumer, why: string): void {
    if (c.closedFor !== undefined) return;
    c.closedFor = why;
    c.socket.destroy();
  }

  #gone(c: Consumer, hadError: boolean): void {
    if (!this.#clients.delete(c)) return;
    if (c.closedFor !== undefined) this.#log.warn({ remote: c.remote }, `playout consumer closed: ${c.closedFor}`);
    else if (hadError) this.#log.info({ remote: c.remote }, 'playout consumer gone: connection reset');
    else this.#log.debug({ remote: c.remote }, 'playout consumer gone');
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
    const now = Date.now();
    for (const c of this.#clients) {
      if (c.socket.destroyed || c.closedFor !== undefined) continue;
      if (c.socket.writableLength === 0) c.progressAt = now;
      else if (now - c.progressAt >= this.#stallMs) {
        this.#end(c, `it read nothing for ${Math.round(this.#stallMs / 1000)} s`);
        continue;
      }
      if (c.pending.length === 0) continue;
      const buf = c.pending.length === 1 ? Buffer.from(c.pending[0]!) : Buffer.concat(c.pending, c.pendingBytes);
      c.pending = [];
      c.pendingBytes = 0;
      c.socket.write(buf, (err) => { if (!err) c.progressAt = Date.now(); });
    }
  }

  close(): Promise<void> {
    for (const c of this.#clients) c.socket.destroy();
    this.#clients.clear();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
