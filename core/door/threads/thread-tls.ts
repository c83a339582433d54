import type { Server } from 'node:https';
import { https } from '../../runtime/builtin.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WorkerTls } from './messages.ts';
import { answerClientError, applyServerBounds, serverOptions, type ConnectionCap } from '../../http/listener-bounds.ts';
import { checkHeadersWhileConnected } from '../../http/header-check.ts';

/**
 * A serving thread's HTTPS listener (worker side): it binds main's HTTPS port with `reusePort`
 * (the kernel spreads TLS connections over main and the threads, so the handshakes spread too)
 * and hands requests to the same dispatch as the HTTP listener. Main sends the port and the
 * certificate at the start and on every change; a new certificate is swapped in place
 * (`setSecureContext`: new connections get it, open ones keep theirs). Its bytes are not in the
 * sessions' `HTTP` session, as main's HTTPS listener's are not (that counts the API listener).
 */
export class ThreadTlsListener {
  #server: Server | undefined;
  #at = '';
  readonly #handle: (req: IncomingMessage, res: ServerResponse) => void;
  readonly #failed: (message: string) => void;
  readonly #continue: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  readonly #upgrade: ((req: IncomingMessage, socket: Duplex, head: Buffer) => void) | undefined;
  /** The thread's bounds and per-address counts, the same as its HTTP listener's. */
  readonly #cap: ConnectionCap;

  /**
   * `failed` reports a listen error; `onContinue` takes requests that wait for `100 Continue`,
   * `onUpgrade` upgrade requests (WebSocket).
   */
  constructor(handle: (req: IncomingMessage, res: ServerResponse) => void, failed: (message: string) => void, cap: ConnectionCap,
    onContinue?: (req: IncomingMessage, res: ServerResponse) => void, onUpgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void) {
    this.#cap = cap;
    this.#handle = handle;
    this.#failed = failed;
    this.#continue = onContinue;
    this.#upgrade = onUpgrade;
  }

  /** Listens (or moves) as `tls` says, takes its certificate, or stops with undefined. */
  apply(tls: WorkerTls | undefined): void {
    if (!tls) {
      void this.close();
      return;
    }
    // a Buffer crossed as a Uint8Array
    const pair = { cert: Buffer.from(tls.cert), key: Buffer.from(tls.key) };
    const at = `${tls.host}:${tls.port}`;
    if (this.#server && this.#at === at) {
      this.#server.setSecureContext(pair);
      return;
    }
    void this.close();
    const server = https.createServer({ ...pair, ...serverOptions(this.#cap.bounds) }, this.#handle);
    server.prependListener('connection', (socket) => { this.#cap.admit(socket); });
    checkHeadersWhileConnected(server);
    server.on('clientError', answerClientError);
    if (this.#continue) server.on('checkContinue', this.#continue);
    if (this.#upgrade) server.on('upgrade', this.#upgrade);
    this.#server = server;
    this.#at = at;
    server.on('error', (err) => {
      // the thread keeps serving HTTP; main's HTTPS listener still takes every TLS client
      this.#failed(`HTTPS listen ${at}: ${err.message}`);
      if (this.#server === server) {
        this.#server = undefined;
        this.#at = '';
      }
      server.close();
    });
    server.listen({ host: tls.host, port: tls.port, reusePort: true });
  }

  /** New bounds (the cap has them already) on the open listener. */
  bounds(): void {
    if (this.#server) applyServerBounds(this.#server, this.#cap.bounds);
  }

  /** Closes the listener and its connections. */
  close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#at = '';
    if (!server?.listening) {
      server?.close();
      return Promise.resolve();
    }
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    return closed;
  }
}
