import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { ThreadTraffic } from './module.ts';
import { InternalListener } from './internal-listener.ts';
import { ThreadHandle, type ThreadLog } from './thread-handle.ts';
import type { WorkerTls } from './messages.ts';
import { capOf, connectionSlots, type ListenerBounds } from '../../http/listener-bounds.ts';

export interface ServeOptions {
  host: string;
  port: number;
  count: number;
  /** The current app's HTTP server: forwarded requests go there. */
  server: Server;
  log: ThreadLog;
}

/** The file door as the pool runs it in every thread: its init, the snapshot a new thread starts from, and who hears its copies. */
export interface PoolDoor {
  init: unknown;
  snapshot(): unknown;
  receive(message: unknown): void;
}

/** The serving threads as one app's core sees them. */
export interface AppThreads {
  /** Threads configured (`http.threads`); 0 = the main loop serves alone. */
  readonly count: number;
  /** The first path segments of the app's GET routes and redirects (threads/route-heads.ts). */
  routeHeads(): readonly string[];
  /** The bytes each client address exchanged with the threads' listeners, about once a second, until the app closes. */
  onTraffic(fn: (traffic: readonly ThreadTraffic[]) => void): void;
  /** Runs the app's door in every thread (and replacement) until the app closes; gives its broadcast. */
  runDoor(door: PoolDoor): (message: unknown) => void;
  close(): void;
}

/**
 * The serving threads of one service (it outlives reloads, like the port): N workers listening
 * on the API port beside the main loop, the loopback listener they forward to, the per-boot key
 * of the peer header, and the current app's file door.
 */
export class ServingThreadPool {
  /** Signs the client peer on forwarded requests (see peer-header.ts). */
  readonly key = randomBytes(32);
  /** Per-address connection counts of every listener of the service, main's and the threads' (listener-bounds.ts). */
  readonly connectionSlots = connectionSlots();
  /** The current app's `http.*` bounds, for new threads too. */
  #bounds: ListenerBounds | undefined;
  readonly #internal = new InternalListener();
  /** The current app's door, while it listens. */
  #door: PoolDoor | undefined;
  /** The current app's receivers of the threads' socket bytes. */
  readonly #traffic = new Set<(t: readonly ThreadTraffic[]) => void>();
  #threads: ThreadHandle[] = [];
  #at: { host: string; port: number } | undefined;
  /** The HTTPS port and certificate main's HTTPS listener shares (set by it), for new threads too. */
  #tls: WorkerTls | undefined;

  /** The threads as one app sees them: `count` threads; its door goes when the app closes. */
  forApp(count: number, routeHeads: () => readonly string[] = () => []): AppThreads {
    let mine: PoolDoor | undefined;
    const listeners: Array<(t: readonly ThreadTraffic[]) => void> = [];
    return {
      count,
      routeHeads,
      onTraffic: (fn) => {
        listeners.push(fn);
        this.#traffic.add(fn);
      },
      runDoor: (door) => {
        if (count === 0) return () => {};
        mine = door;
        this.#setDoor(door);
        return (data) => { if (this.#door === door) for (const t of this.#threads) t.send(data); };
      },
      close: () => {
        if (mine && this.#door === mine) this.#setDoor(undefined);
        for (const fn of listeners) this.#traffic.delete(fn);
      },
    };
  }

  #setDoor(door: PoolDoor | undefined): void {
    this.#door = door;
    for (const t of this.#threads) t.setDoor(this.#doorSpec());
  }

  #doorSpec(): { init: unknown; snapshot: unknown } | undefined {
    return this.#door && { init: this.#door.init, snapshot: this.#door.snapshot() };
  }

  /** Starts, keeps or stops threads so that `count` serve `host:port` (after each listen, reloads too). */
  async serve(o: ServeOptions): Promise<void> {
    this.#internal.target = o.server;
    // the app's server carries its bounds (core/http/server.ts)
    const bounds = capOf(o.server)?.bounds;
    if (!bounds) throw new Error('serving threads: the server has no listener bounds');
    if (JSON.stringify(bounds) !== JSON.stringify(this.#bounds)) {
      this.#bounds = bounds;
      for (const t of this.#threads) t.setBounds(bounds);
    }
    if (this.#at && (this.#at.host !== o.host || this.#at.port !== o.port)) await this.#stopAll();
    this.#at = { host: o.host, port: o.port };
    while (this.#threads.length > o.count) await this.#threads.pop()!.stop();
    if (this.#threads.length === o.count) return;
    const forwardPort = await this.#internal.open();
    const starting: Promise<void>[] = [];
    for (let i = this.#threads.length; i < o.count; i++) {
      const t = new ThreadHandle(i, () => ({
        host: o.host, port: o.port, forwardPort, key: new Uint8Array(this.key), door: this.#doorSpec(), tls: this.#tls,
        bounds: this.#bounds!, slots: this.connectionSlots,
      }), o.log, (message) => this.#door?.receive(message), (peers) => { for (const fn of this.#traffic) fn(peers); });
      this.#threads.push(t);
      starting.push(t.start());
    }
    await Promise.all(starting);
    o.log.info({ threads: o.count, port: o.port }, 'serving threads listening');
  }

  /**
   * HTTPS on every thread (main's HTTPS listener calls it when it opens with reusePort, gets a new
   * certificate, moves or closes): the threads listen on that port too, take the certificate
   * (setSecureContext) or stop; threads started later (replacements) get it at their start.
   */
  shareTls(tls: { host: string; port: number; cert: Buffer; key: Buffer } | undefined): void {
    this.#tls = tls && { host: tls.host, port: tls.port, cert: new Uint8Array(tls.cert), key: new Uint8Array(tls.key) };
    for (const t of this.#threads) t.setTls(this.#tls);
  }

  /** Requests each thread answered itself and forwarded (for tests and the benchmark). */
  stats(): Promise<Array<{ served: number; forwarded: number }>> {
    return Promise.all(this.#threads.map((t) => t.stats()));
  }

  /** Ends thread `i` abruptly, as a crash would (test hook): it is replaced. */
  kill(i: number): Promise<void> {
    return this.#threads[i]?.crash() ?? Promise.resolve();
  }

  /** Generations started per thread (1 = never replaced). */
  generations(): number[] {
    return this.#threads.map((t) => t.generation);
  }

  async #stopAll(): Promise<void> {
    const all = this.#threads;
    this.#threads = [];
    await Promise.all(all.map((t) => t.stop()));
  }

  async close(): Promise<void> {
    await this.#stopAll();
    this.#internal.target = undefined;
    await this.#internal.close();
  }
}
