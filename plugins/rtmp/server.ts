import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TlsOptions } from 'node:tls';
import type { Logger } from 'pino';
import { BootError } from '../../sdk/index.ts';
import type { ConnectionLimits } from './limits.ts';

/** `ip:port` of a socket's peer, IPv6 in brackets. */
export function remoteOf(socket: Socket): string {
  const ip = socket.remoteAddress ?? '';
  return `${ip.includes(':') ? `[${ip}]` : ip}:${socket.remotePort ?? 0}`;
}

export interface ListenerOptions {
  log: Logger;
  /** Shared by the RTMP and RTMPS listeners of one service. */
  limits: ConnectionLimits;
  /** RTMPS: the certificate; its handshake must be done within `handshakeTimeoutMs` too. */
  tls?: TlsOptions;
  handshakeTimeoutMs: number;
}

/** `host:port` split for `listen` (`:1935` or a bare `1935` = every interface, `[::1]:1935`). */
export function listenAddress(address: string): { host?: string; port: number } {
  const a = /^\d+$/.test(address) ? `:${address}` : address;
  const i = a.lastIndexOf(':');
  const host = a.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host === '' ? undefined : host, port: Number(a.slice(i + 1)) };
}

/**
 * One RTMP or RTMPS listener and its live sockets. A listen failure (port in use) is a
 * BootError naming the config key, instead of the package's `process.exit`. Every accepted TCP
 * connection is counted against the caps first (an RTMPS one before its TLS handshake).
 */
export class RtmpListener {
  readonly #server: Server;
  readonly #log: Logger;
  /** The TCP sockets (under a TLS socket for RTMPS), so `close` also ends unfinished handshakes. */
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor(onSocket: (socket: Socket) => void, o: ListenerOptions) {
    this.#log = o.log;
    const admit = (raw: Socket): boolean => {
      const release = o.limits.admit(raw.remoteAddress ?? '', remoteOf(raw));
      if (!release) {
        raw.destroy();
        return false;
      }
      this.#sockets.add(raw);
      raw.once('close', () => { this.#sockets.delete(raw); release(); });
      return true;
    };
    const handle = (socket: Socket) => {
      socket.setNoDelay(true);
      onSocket(socket);
    };
    if (o.tls) {
      this.#server = createTlsServer({ ...o.tls, handshakeTimeout: o.handshakeTimeoutMs }, handle);
      // before the TLS layer wraps the socket: a refused one never costs a TLS handshake
      this.#server.prependListener('connection', (raw: Socket) => { admit(raw); });
      // a failed TLS handshake (bad client, timeout, refused above) is the client's problem; with
      // a listener here Node leaves the socket open, so it is ended here
      this.#server.on('tlsClientError', (err, socket) => {
        o.log.warn({ remote: remoteOf(socket), protocol: 'rtmps' }, `rtmp connection closed: TLS handshake failed (${err.message})`);
        socket.destroy();
      });
    } else {
      this.#server = createServer((raw) => { if (admit(raw)) handle(raw); });
    }
  }

  /** Binds; rejects with a BootError that names `key` and the address. */
  async listen(key: string, address: string): Promise<number> {
    const { host, port } = listenAddress(address);
    await new Promise<void>((resolve, reject) => {
      const fail = (err: NodeJS.ErrnoException) => {
        const why = err.code === 'EADDRINUSE' ? 'the port is already in use' : err.message;
        reject(new BootError(`${key} '${address}': cannot listen, ${why}`, { cause: err }));
      };
      this.#server.once('error', fail);
      this.#server.listen({ host, port }, () => {
        this.#server.off('error', fail);
        // accept can fail later (EMFILE under a flood): without a listener that would end the process
        this.#server.on('error', (err) => this.#log.warn({ err: err.message, key }, 'rtmp listener error'));
        resolve();
      });
    });
    const a = this.#server.address();
    this.#port = typeof a === 'object' && a ? a.port : port;
    return this.#port;
  }

  /** The bound port (the real one when the config says port 0). */
  get port(): number {
    return this.#port;
  }

  /** A new certificate after a renewal; live connections keep theirs. */
  setSecureContext(opts: TlsOptions): void {
    (this.#server as unknown as { setSecureContext(o: TlsOptions): void }).setSecureContext(opts);
  }

  /** Stops accepting and drops every connection (their end hooks fire on close). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const s of this.#sockets) s.destroy();
    if (this.#server.listening) await closed;
  }
}
