import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * The core's serving threads (`http.threads`), as the core's own parts see them (no plugin does:
 * the file door runs in them, see core/http/files/): the core runs N worker threads, each with its own listener on
 * the API port and, with TLS on, on the HTTPS port (`reusePort`, the kernel spreads connections).
 * A thread answers what its module takes (the core's file door, core/http/files/thread-door.ts) and
 * forwards everything else to the main thread, which stays the one owner of state, routes, hooks
 * and the IP lists.
 */

/** What a plugin runs in every serving thread. */
export interface ThreadModule {
  /** Unique per plugin, e.g. `memfs`. */
  name: string;
  /** URL of an ES module whose default export is a `ThreadFastPathFactory` (`new URL('./thread-door.ts', import.meta.url).href`). */
  url: string;
  /** Sent to the factory in every thread (structured clone; SharedArrayBuffers stay shared). */
  init?: unknown;
  /** Called in the main thread when a thread starts or is replaced: what it must get to catch up (a snapshot). */
  snapshot?: () => unknown;
}

/** The main thread's side of a registered module. */
export interface ThreadChannel {
  /** Sends a message to the module in every thread, in order (one channel per module and thread). */
  broadcast(message: unknown): void;
  /** Receives what the module's threads `send` (e.g. counters in batches); one receiver. */
  onMessage(fn: (message: unknown) => void): void;
  /** Stops the module in every thread (the plugin's `onClose`). */
  close(): void;
}

/** The serving threads as a plugin sees them (provided by the core). */
export interface ServingThreads {
  /** Threads configured (`http.threads`); 0 = the main loop serves alone and `register` is a no-op. */
  readonly count: number;
  /** Runs `module` in every thread (and in every replacement); returns its channel. */
  register(module: ThreadModule): ThreadChannel;
  /**
   * The first path segments (`api`, `memfs`, `ping`) of the app's GET routes and redirects, `:`
   * when a route starts with a parameter: a module serving a catch-all mount (disk `/*`) leaves
   * paths under these to main, whose router prefers the specific route. Complete once the app
   * listens (plugins add routes in setup).
   */
  routeHeads(): readonly string[];
  /**
   * Receives, about once a second, the bytes each client address exchanged with the threads'
   * listeners (requests a thread answered and those it forwarded alike, headers included), until
   * the app closes. Main's own server never counts the forwarded hop (`isServingThreadSocket`).
   */
  onTraffic(fn: (traffic: readonly ThreadTraffic[]) => void): void;
}

/** One client address's bytes over the threads' sockets since the last report. */
export interface ThreadTraffic {
  /** The TCP peer, normalized (`127.0.0.1`, `::1`). */
  peer: string;
  rx: number;
  tx: number;
}

const THREAD_SOCKET = Symbol.for('core.serving-thread-socket');

/**
 * True for a connection of main's server that carries requests a serving thread forwarded (its
 * peer is the loopback, the client's bytes were counted on the thread): traffic accounting skips it.
 *
 * @example
 * server.on('connection', (socket) => { if (!isServingThreadSocket(socket)) track(socket); });
 */
export function isServingThreadSocket(socket: object): boolean {
  return (socket as Record<symbol, unknown>)[THREAD_SOCKET] === true;
}

/**
 * Marks a connection as a forwarding one (the core's internal listener).
 *
 * @example
 * internal.on('connection', (socket) => markServingThreadSocket(socket));
 */
export function markServingThreadSocket(socket: object): void {
  (socket as Record<symbol, unknown>)[THREAD_SOCKET] = true;
}

/** What a worker-side module gets in its thread. */
export interface ThreadModuleContext {
  /** The module's `init`. */
  readonly init: unknown;
  /** The first message of a new thread: the result of the module's `snapshot()` (undefined without one). */
  readonly snapshot: unknown;
  /** Subscribes to the module's broadcasts (in the order main sent them); one subscriber per module. */
  onMessage(fn: (message: unknown) => void): void;
  /**
   * Delivers, synchronously and in order, the broadcasts main has sent that the thread has not
   * handled yet (its event loop may be busy with requests). A module that must never answer from
   * older state than main's calls it when it sees it is behind (e.g. a sequence number main
   * publishes in a SharedArrayBuffer).
   */
  drain(): void;
  /** Sends a message to the module's `onMessage` on the main thread (batch what is frequent). */
  send(message: unknown): void;
}

/**
 * A thread-side request handler: answers completely and returns true, or returns false (main
 * answers). A promise when the decision needs I/O (disk): it must not touch `res` before it is
 * sure to answer, and resolves false to leave the request (its body unread) to main.
 */
export type ThreadFastPath = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

/** The default export of a worker-side module. */
export type ThreadFastPathFactory = (ctx: ThreadModuleContext) => ThreadFastPath;

/**
 * The header a serving thread puts on a request it forwards: the TCP peer it saw, whether it came
 * over HTTPS (then `request.protocol` is `https` on main) and an HMAC with a per-boot key. Main
 * believes it only with a valid signature and removes it before any route or hook runs, so a
 * plugin never sees it; a client sending it gets nothing. Main's file door reads it without
 * removing it (core/http/files/main.ts) and leaves it for the front door.
 *
 * @example
 * const signed = req.headers[THREAD_PEER_HEADER]; // a thread's hop to main
 */
export const THREAD_PEER_HEADER = 'x-core-thread-peer';
