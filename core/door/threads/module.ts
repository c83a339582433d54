import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * The core's serving threads (`http.threads`), as the core's own parts see them: N worker
 * threads, each with its own listener on the API port and, with TLS on, on the HTTPS port
 * (`reusePort`, the kernel spreads connections). A thread answers what its file door takes
 * (core/door/thread-door.ts) and forwards everything else to the main thread, which stays
 * the one owner of state, routes, hooks and the IP lists.
 */

/** One client address's bytes over the threads' sockets since the last report. */
export interface ThreadTraffic {
  /** The TCP peer, normalized (`127.0.0.1`, `::1`). */
  peer: string;
  rx: number;
  tx: number;
}

/**
 * A thread's door: answers completely and returns true, or returns false (main answers). A
 * promise when the decision needs I/O (disk): it must not touch `res` before it is sure to
 * answer, and resolves false to leave the request (its body unread) to main.
 */
export type ThreadFastPath = (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean>;

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

/**
 * The header a serving thread puts on a request it forwards: the TCP peer it saw, whether it came
 * over HTTPS (then `request.protocol` is `https` on main) and an HMAC with a per-boot key. Main
 * believes it only with a valid signature and removes it before any route or hook runs, so a
 * plugin never sees it; a client sending it gets nothing. Main's file door reads it without
 * removing it (core/door/main.ts) and leaves it for the front door.
 *
 * @example
 * const signed = req.headers[THREAD_PEER_HEADER]; // a thread's hop to main
 */
export const THREAD_PEER_HEADER = 'x-core-thread-peer';
