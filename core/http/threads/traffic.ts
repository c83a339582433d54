import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { normalizeIp } from '../../../sdk/client-address.ts';
import type { ThreadTraffic } from '../../../sdk/serving-threads.ts';

const REPORT_MS = 1_000;

interface Seen { rx: number; tx: number }

/**
 * A serving thread's socket bytes per client address, reported about once a second (and when the
 * thread closes): what main's sessions count as the `HTTP` session for its own sockets. Read
 * from the sockets' counters, so nothing runs per request.
 */
export class ThreadTrafficMeter {
  readonly #live = new Map<Socket, Seen>();
  readonly #pending = new Map<string, ThreadTraffic>();
  readonly #send: (peers: ThreadTraffic[]) => void;
  readonly #timer: NodeJS.Timeout;

  constructor(server: Server, send: (peers: ThreadTraffic[]) => void) {
    this.#send = send;
    server.on('connection', (socket: Socket) => {
      const seen = { rx: 0, tx: 0 };
      this.#live.set(socket, seen);
      socket.once('close', () => {
        this.#count(socket, seen);
        this.#live.delete(socket);
      });
    });
    // unref: a thread ends when its listener closes
    this.#timer = setInterval(() => this.flush(), REPORT_MS).unref();
  }

  #count(socket: Socket, seen: Seen): void {
    const rx = socket.bytesRead;
    const tx = socket.bytesWritten;
    if (rx === seen.rx && tx === seen.tx) return;
    const peer = normalizeIp(socket.remoteAddress ?? '');
    let p = this.#pending.get(peer);
    if (!p) {
      p = { peer, rx: 0, tx: 0 };
      this.#pending.set(peer, p);
    }
    p.rx += rx - seen.rx;
    p.tx += tx - seen.tx;
    seen.rx = rx;
    seen.tx = tx;
  }

  flush(): void {
    for (const [socket, seen] of this.#live) this.#count(socket, seen);
    if (this.#pending.size === 0) return;
    const peers = [...this.#pending.values()];
    this.#pending.clear();
    this.#send(peers);
  }

  close(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}
