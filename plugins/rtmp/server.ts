import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TlsOptions } from 'node:tls';
import { BootError } from '../../sdk/index.ts';

/** `host:port` split for `listen` (`:1935` or a bare `1935` = every interface, `[::1]:1935`). */
export function listenAddress(address: string): { host?: string; port: number } {
  const a = /^\d+$/.test(address) ? `:${address}` : address;
  const i = a.lastIndexOf(':');
  const host = a.slice(0, i).replace(/^\[|\]$/g, '');
  return { host: host === '' ? undefined : host, port: Number(a.slice(i + 1)) };
}

/**
 * One RTMP or RTMPS listener and its live sockets. A listen failure (port in use) is a
 * BootError naming the config key, instead of the package's `process.exit`.
 */
export class RtmpListener {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #port = 0;

  constructor(onSocket: (socket: Socket) => void, tls?: TlsOptions) {
    const handle = (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
      socket.setNoDelay(true);
      onSocket(socket);
    };
    this.#server = tls ? createTlsServer(tls, handle) : createServer(handle);
    // a TLS handshake that fails (wrong port, bad client) is the client's problem, not ours
    this.#server.on('tlsClientError', () => {});
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
