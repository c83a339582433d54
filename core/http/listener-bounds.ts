import type { Server as HttpServer } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
// the SDK's files themselves, not its index: the serving threads load this module too
import { addressKey, CidrSet, normalizeIp } from '../../sdk/client-address.ts';
import { isServingThreadSocket } from '../door/threads/module.ts';
import type { HttpConfig } from '../../sdk/config/sections-http.ts';
import { SendStall } from './send-stall.ts';

/**
 * What every HTTP listener (main's API port, main's HTTPS listener, each serving thread's HTTP and
 * HTTPS listeners) bounds, from `http.*` and `api.access.trusted_proxies`. Plain data: it crosses
 * to the serving threads as is.
 */
export interface ListenerBounds {
  maxHeaderBytes: number;
  headerTimeoutMs: number;
  bodyTimeoutMs: number;
  /** 0 = no limit. */
  maxPerAddress: number;
  /** `http.send_timeout_seconds` in ms (0: never): a connection whose client takes nothing of its waiting output is closed. */
  sendStallMs: number;
  /** CIDRs whose connections are not counted (a reverse proxy carries many clients). */
  trusted: string[];
}

export function listenerBounds(http: Pick<HttpConfig, 'max_header_size_kbytes' | 'header_timeout_seconds' | 'body_timeout_seconds' | 'max_connections_per_address'
  | 'send_timeout_seconds'>, trusted: readonly string[]): ListenerBounds {
  return {
    sendStallMs: http.send_timeout_seconds * 1000,
    maxHeaderBytes: http.max_header_size_kbytes * 1024,
    headerTimeoutMs: http.header_timeout_seconds * 1000,
    bodyTimeoutMs: http.body_timeout_seconds * 1000,
    maxPerAddress: http.max_connections_per_address,
    trusted: [...trusted],
  };
}

/** How often node checks the header timeout (it is read at each check, so a reload may change it). */
export const CHECK_INTERVAL_MS = 1000;

/** The node server options of a listener with these bounds (HTTPS servers take `handshakeTimeout` too). */
/** How long an idle kept-alive connection stays open on every listener (fastify's default on main's API port). */
export const KEEP_ALIVE_MS = 72_000;

export function serverOptions(b: ListenerBounds): {
  maxHeaderSize: number; headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number; handshakeTimeout: number; keepAliveTimeout: number;
} {
  // requestTimeout 0: node's would cut long uploads and live ingest; body-deadlines.ts bounds bodies.
  // A TLS handshake gets the header timeout as well (node's default is 120 s), fixed when the listener opens
  return {
    maxHeaderSize: b.maxHeaderBytes, headersTimeout: b.headerTimeoutMs, requestTimeout: 0,
    connectionsCheckingInterval: CHECK_INTERVAL_MS, handshakeTimeout: b.headerTimeoutMs, keepAliveTimeout: KEEP_ALIVE_MS,
  };
}

/** New bounds on a listener that stays open (a reload): node reads both per connection or per check. */
export function applyServerBounds(server: HttpServer, b: ListenerBounds): void {
  // node keeps the option as a property and reads it for every new connection (its types lack it)
  (server as HttpServer & { maxHeaderSize: number }).maxHeaderSize = b.maxHeaderBytes;
  server.headersTimeout = b.headerTimeoutMs;
}

/** Slots of the shared per-address counts (a power of two; 256 KiB of shared memory). */
const SLOTS = 1 << 16;

/**
 * Shared memory for the per-address connection counts of one service: main's listeners and every
 * serving thread count in the same slots (Atomics), so the limit holds for an address whatever
 * listener the kernel hands its connections to.
 */
export function connectionSlots(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(4 * SLOTS));
}

/** FNV-1a of the address key, as a slot. Two addresses may share a slot (and its budget): 1 in 65,536. */
function slotOf(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return (h >>> 0) & (SLOTS - 1);
}

/**
 * `http.max_connections_per_address`: a connection beyond the limit of its address (IPv6: its
 * /64) is closed before node parses a byte of it, so one address cannot hold more than the limit
 * of sockets, header buffers and body timers. Trusted proxies and the serving threads' hops to
 * main are not counted: they carry many clients.
 */
export class ConnectionCap {
  /** The shared counts (main's other listeners and the serving threads count in them too). */
  readonly slots: Int32Array;
  #bounds!: ListenerBounds;
  #trusted = new CidrSet([]);
  /** `http.send_timeout_seconds` over this listener's connections. */
  readonly stall = new SendStall(0);

  constructor(slots: Int32Array, bounds: ListenerBounds) {
    this.slots = slots;
    this.update(bounds);
  }

  /** The bounds of the listener this cap belongs to (the HTTPS listener and the threads take them from main's). */
  get bounds(): ListenerBounds { return this.#bounds; }

  update(bounds: ListenerBounds): void {
    this.#bounds = bounds;
    this.#trusted = new CidrSet(bounds.trusted);
    this.stall.update(bounds.sendStallMs);
  }

  /** Counts the connections of `server` from now on; first of its listeners, so refused ones cost nothing more. */
  attach(server: NetServer): this {
    server.prependListener('connection', (socket: Socket) => { this.admit(socket); });
    (server as unknown as Record<symbol, ConnectionCap>)[CAP] = this;
    return this;
  }

  /** Counts a new connection until it closes; false, and the socket destroyed, when its address is at the limit. */
  admit(socket: Socket | Duplex): boolean {
    if (isServingThreadSocket(socket)) return true;
    const max = this.#bounds.maxPerAddress;
    const ip = max > 0 ? normalizeIp((socket as Socket).remoteAddress ?? '') : '';
    if (max > 0 && !this.#trusted.has(ip)) {
      const slot = slotOf(addressKey(ip));
      if (Atomics.add(this.slots, slot, 1) >= max) {
        Atomics.sub(this.slots, slot, 1);
        socket.destroy();
        return false;
      }
      socket.once('close', () => { Atomics.sub(this.slots, slot, 1); });
    }
    this.stall.watch(socket);
    return true;
  }
}

const CAP = Symbol('core.connection-cap');

/** The cap attached to a server (main's API server carries the app's bounds and the service's shared counts). */
export function capOf(server: object | undefined): ConnectionCap | undefined {
  return server ? (server as Record<symbol, ConnectionCap | undefined>)[CAP] : undefined;
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/**
 * `clientError` of every listener: the interface's Error body instead of node's bare status line
 * (or fastify's own shape), then the connection is closed. A header too large is 431, headers
 * that did not arrive in time 408, anything else node's parser refuses 400.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let detail = 'malformed request';
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    detail = 'the request line and headers are larger than http.max_header_size_kbytes';
  } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    detail = 'the request headers did not arrive within http.header_timeout_seconds';
  }
  const message = REASONS[status]!;
  const body = JSON.stringify({ code: status, message, details: [detail] });
  // a response of an earlier request on this connection is on its way: a status line now would corrupt it
  const busy = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !busy) {
    socket.write(`HTTP/1.1 ${status} ${message}\r\nContent-Type: application/json; charset=utf-8\r\n`
      + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}
