import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { ServingThreads, ThreadChannel, ThreadModule, ThreadTraffic } from './module.ts';
import { InternalListener } from './internal-listener.ts';
import { ThreadHandle, type ThreadLog } from './thread-handle.ts';
import type { ModuleSpec, WorkerTls } from './messages.ts';
import { capOf, connectionSlots, type ListenerBounds } from '../listener-bounds.ts';

export interface ServeOptions {
  host: string;
  port: number;
  count: number;
  /** The current app's HTTP server: forwarded requests go there. */
  server: Server;
  log: ThreadLog;
}

/**
 * The serving threads of one service (it outlives reloads, like the port): N workers listening
 * on the API port beside the main loop, the loopback listener they forward to, the per-boot key
 * of the peer header, and the modules the current app's plugins registered.
 */
export class ServingThreadPool {
  /** Signs the client peer on forwarded requests (see peer-header.ts). */
  readonly key = randomBytes(32);
  /** Per-address connection counts of every listener of the service, main's and the threads' (listener-bounds.ts). */
  readonly connectionSlots = connectionSlots();
  /** The current app's `http.*` bounds, for new threads too. */
  #bounds: ListenerBounds | undefined;
  readonly #internal = new InternalListener();
  readonly #modules = new Map<string, ThreadModule>();
  /** Per module, who receives what its threads send. */
  readonly #receivers = new Map<string, (message: unknown) => void>();
  /** The current app's receivers of the threads' socket bytes. */
  readonly #traffic = new Set<(t: readonly ThreadTraffic[]) => void>();
  #threads: ThreadHandle[] = [];
  #at: { host: string; port: number } | undefined;
  /** The HTTPS port and certificate main's HTTPS listener shares (set by it), for new threads too. */
  #tls: WorkerTls | undefined;

  /** The SDK service for one app: `count` threads; its modules go when the app closes. */
  forApp(count: number, routeHeads: () => readonly string[] = () => []): ServingThreads & { close(): void } {
    const mine = new Set<string>();
    const listeners: Array<(t: readonly ThreadTraffic[]) => void> = [];
    return {
      count,
      routeHeads,
      onTraffic: (fn) => {
        listeners.push(fn);
        this.#traffic.add(fn);
      },
      register: (module: ThreadModule): ThreadChannel => {
        if (count === 0) return { broadcast: () => {}, onMessage: () => {}, close: () => {} };
        mine.add(module.name);
        this.#modules.set(module.name, module);
        for (const t of this.#threads) t.addModule(this.#spec(module));
        this.#receivers.delete(module.name);
        return {
          onMessage: (fn) => { if (this.#modules.get(module.name) === module) this.#receivers.set(module.name, fn); },
          broadcast: (data) => { if (this.#modules.get(module.name) === module) for (const t of this.#threads) t.send(module.name, data); },
          close: () => this.#drop(module),
        };
      },
      close: () => {
        for (const name of mine) { const m = this.#modules.get(name); if (m) this.#drop(m); }
        for (const fn of listeners) this.#traffic.delete(fn);
      },
    };
  }

  #drop(module: ThreadModule): void {
    if (this.#modules.get(module.name) !== module) return;
    this.#modules.delete(module.name);
    this.#receivers.delete(module.name);
    for (const t of this.#threads) t.dropModule(module.name);
  }

  #spec(m: ThreadModule): ModuleSpec {
    return { name: m.name, url: m.url, init: m.init, snapshot: m.snapshot?.() };
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
        host: o.host, port: o.port, forwardPort, key: new Uint8Array(this.key), modules: [...this.#modules.values()].map((m) => this.#spec(m)), tls: this.#tls,
        bounds: this.#bounds!, slots: this.connectionSlots,
      }), o.log, (name, message) => this.#receivers.get(name)?.(message), (peers) => { for (const fn of this.#traffic) fn(peers); });
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
