import type { Server } from 'node:https';
import { https } from '../runtime/builtin.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { tlsCertificatesRef, type HttpScope, type TlsKeyPair } from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';
import { listenAddress } from './listen-address.ts';
import { ConnectionCap, answerClientError, applyServerBounds, capOf, connectionSlots, listenerBounds, serverOptions } from './listener-bounds.ts';
import { checkHeadersWhileConnected } from './header-check.ts';
import { frontOf } from '../door/install.ts';

/** What the HTTPS listener needs of an app: its routes, config, certificate service and log. */
export interface HttpsTarget {
  http: HttpScope;
  config: ConfigData;
  services: { resolve(ref: typeof tlsCertificatesRef): unknown };
  log: Logger;
}

/** Hands the HTTPS port and certificate to the serving threads (the pool's `shareTls`), undefined to stop. */
export type TlsShare = (tls: { host: string; port: number; cert: Buffer; key: Buffer } | undefined) => void;

/**
 * The HTTPS listener on `tls.address`: a node https server handing every request to the app's
 * fastify routing, so HTTP and HTTPS serve the same routes (request.protocol is `https` here, so
 * the `api.access.https` lists apply). It is owned by the service, not the app: a config reload
 * swaps the app and the certificate (setSecureContext) without closing it, unless `tls.address`
 * changed, TLS was turned off or serving threads were turned on or off. While the app is
 * rebuilt, requests get a 503. Beside serving threads it binds with `reusePort` and shares its
 * port and every certificate with them (`share`), so they take TLS clients too.
 */
export class HttpsListener {
  #server: Server | undefined;
  #address = '';
  #host = '';
  /** Bound with reusePort, the serving threads listening beside it. */
  #shared = false;
  #target: HttpsTarget | undefined;
  #unsubscribe: (() => void) | undefined;
  readonly #share: TlsShare;
  /** `http.*` bounds and per-address counts: the current app's, the counts shared with main's HTTP port. */
  #cap: ConnectionCap | undefined;

  constructor(share: TlsShare = () => {}) {
    this.#share = share;
  }

  /** The bound port, 0 when not listening. */
  get port(): number {
    return (this.#server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /**
   * Points the listener at a new app (after a boot or a reload); opens, moves or closes it as the
   * config says. `keepPort`: the port to bind again when `tls.address` names port 0 (a reload);
   * `threads`: serving threads run and take HTTPS too.
   */
  async attach(target: HttpsTarget, keepPort?: number, threads = false): Promise<void> {
    this.detach();
    const tls = target.config.tls;
    if (!tls.enable) return this.close();
    const certs = target.services.resolve(tlsCertificatesRef) as { current(): TlsKeyPair | undefined; onChange(fn: (p: TlsKeyPair) => void): () => void };
    const log = target.log.child({ component: 'HTTPS' });
    // moved, or threads turned on or off: bound again (the reusePort option is fixed at bind time)
    if (this.#server && (this.#address !== tls.address || this.#shared !== threads)) await this.close();
    this.#shared = threads;
    this.#target = target;
    this.#bounds(target);
    // a renewal, or the first automatic certificate: the listener opens when it arrives
    this.#unsubscribe = certs.onChange((next) => {
      if (this.#server) {
        this.#server.setSecureContext({ ...next });
        this.#publish(next);
        log.info('certificate replaced');
      } else if (this.#target === target) {
        this.#open(target.config, next, keepPort).then(() => log.info({ port: this.port }, 'HTTPS listening'), (err: Error) => log.error({ err: err.message }, 'HTTPS cannot listen'));
      }
    });
    const pair = certs.current();
    if (!pair) {
      // the reference goes on without TLS until a certificate can be had
      log.warn(tls.auto ? 'no certificate yet: HTTPS opens once one is obtained' : 'no certificate available: HTTPS is off');
      return;
    }
    if (this.#server) {
      this.#server.setSecureContext({ ...pair });
      this.#publish(pair);
    } else {
      await this.#open(target.config, pair, keepPort);
    }
  }

  /** The app's `http.*` bounds, on the open listener too (it outlives reloads). */
  #bounds(target: HttpsTarget): void {
    const main = capOf(target.http.server);
    const bounds = main?.bounds ?? listenerBounds(target.config.http, target.config.api.access.trusted_proxies);
    if (this.#cap && this.#cap.slots === main?.slots) this.#cap.update(bounds);
    else this.#cap = new ConnectionCap(main?.slots ?? connectionSlots(), bounds);
    if (this.#server) applyServerBounds(this.#server, bounds);
  }

  /** Stops handing requests to the current app (it is about to close). */
  detach(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#target = undefined;
  }

  async close(): Promise<void> {
    this.detach();
    const server = this.#server;
    this.#server = undefined;
    this.#address = '';
    if (!server) return;
    // the threads leave the port first: a listener bound again without reusePort needs it alone
    this.#share(undefined);
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
  }

  /** The port and certificate to the serving threads (none when it does not share the port). */
  #publish(pair: TlsKeyPair): void {
    this.#share(this.#server && this.#shared ? { host: this.#host, port: this.port, ...pair } : undefined);
  }

  async #open(config: ConfigData, pair: TlsKeyPair, keepPort?: number): Promise<void> {
    const address = config.tls.address;
    const { host, port } = listenAddress(address, config);
    // the same bounds as the HTTP listener (core/http/server.ts); bodies are the app's (fastify routing)
    const server = https.createServer({ ...pair, ...serverOptions(this.#cap!.bounds) }, (req, res) => this.#handle(req, res));
    server.prependListener('connection', (socket) => { this.#cap?.admit(socket); });
    checkHeadersWhileConnected(server);
    server.on('clientError', answerClientError);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port: port === 0 && keepPort ? keepPort : port, reusePort: this.#shared }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    this.#address = address;
    this.#host = host;
    this.#publish(pair);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const target = this.#target;
    if (target) {
      frontOf(target.http)(req, res);
      return;
    }
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    res.end(JSON.stringify({ code: 503, message: 'Service Unavailable', details: ['the service is reloading'] }));
  }
}
