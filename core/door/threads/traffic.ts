import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { normalizeIp } from '../../../sdk/client-address.ts';
import type { ThreadTraffic } from './module.ts';

const REPORT_MS = 1_000;

interface Seen { rx: number; tx: number }

/**
 * A listener's socket bytes per client address, reported about once a second (and when it
 * closes): a serving thread's and main's API listener's, for `ServerInfo.onTraffic` (the sessions'
 * `HTTP` session). Read from the sockets' counters, so nothing runs per request.
 */
export class ThreadTrafficMeter {
  readonly #live = new Map<Socket, Seen>();
  readonly #pending = new Map<string, ThreadTraffic>();
  readonly #send: (peers: ThreadTraffic[]) => void;
  /** The reports' timer, while connections live or bytes wait (an idle service does not wake for it). */
  #timer: NodeJS.Timeout | undefined;
  readonly #server: Server;
  readonly #onConnection: (socket: Socket) => void;

  /**
   * `skip`: connections not counted (main's hops from its threads); `atClose`: a closed
   * connection's bytes are reported at once (main's API listener), not with the next report.
   */
  constructor(server: Server, send: (peers: ThreadTraffic[]) => void, opts: { skip?: (socket: Socket) => boolean; atClose?: boolean } = {}) {
    this.#send = send;
    this.#server = server;
    this.#onConnection = (socket: Socket) => {
      if (opts.skip?.(socket)) return;
      const seen = { rx: 0, tx: 0 };
      this.#live.set(socket, seen);
      // unref: a thread ends when its listener closes
      this.#timer ??= setInterval(() => this.flush(), REPORT_MS).unref();
      socket.once('close', () => {
        this.#count(socket, seen);
        this.#live.delete(socket);
        if (opts.atClose) this.flush();
      });
    };
    server.on('connection', this.#onConnection);
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
    if (this.#live.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending.size === 0) return;
    const peers = [...this.#pending.values()];
    this.#pending.clear();
    this.#send(peers);
  }

  close(): void {
    clearInterval(this.#timer);
    this.#server.off('connection', this.#onConnection);
    this.flush();
  }
}
