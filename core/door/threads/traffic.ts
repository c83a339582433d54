import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { normalizeIp } from '../../../sdk/client-address.ts';
import { IdleTick } from '../../../sdk/idle-tick.ts';
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
  /** The reports, while connections live (an idle service does not wake for them); the last one flushes what they left. */
  readonly #tick = new IdleTick(REPORT_MS, () => {
    this.flush();
    return this.#live.size > 0;
  });
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
      this.#tick.wake();
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

  /** Whether the reports' timer runs (only while connections live, and once after). */
  get reporting(): boolean {
    return this.#tick.ticking;
  }

  flush(): void {
    for (const [socket, seen] of this.#live) this.#count(socket, seen);
    if (this.#pending.size === 0) return;
    const peers = [...this.#pending.values()];
    this.#pending.clear();
    this.#send(peers);
  }

  close(): void {
    this.#tick.stop();
    this.#server.off('connection', this.#onConnection);
    this.flush();
  }
}
