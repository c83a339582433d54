import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { tlsCertificatesRef, type ConfigData, type HttpScope, type TlsKeyPair } from '../../sdk/index.ts';
import { listenAddress } from './listen-address.ts';

/** What the HTTPS listener needs of an app: its routes, config, certificate service and log. */
export interface HttpsTarget {
  http: HttpScope;
  config: ConfigData;
  services: { resolve(ref: typeof tlsCertificatesRef): unknown };
  log: Logger;
}

/**
 * The HTTPS listener on `tls.address`: a node https server handing every request to the app's
 * fastify routing, so HTTP and HTTPS serve the same routes (request.protocol is `https` here, so
 * the `api.access.https` lists apply). It is owned by the service, not the app: a config reload
 * swaps the app and the certificate (setSecureContext) without closing it, unless `tls.address`
 * changed or TLS was turned off. While the app is rebuilt, requests get a 503.
 */
export class HttpsListener {
  #server: Server | undefined;
  #address = '';
  #target: HttpsTarget | undefined;
  #unsubscribe: (() => void) | undefined;

  /** The bound port, 0 when not listening. */
  get port(): number {
    return (this.#server?.address() as AddressInfo | null)?.port ?? 0;
  }

  /** Points the listener at a new app (after a boot or a reload); opens, moves or closes it as the config says. */
  async attach(target: HttpsTarget, reusePort?: number): Promise<void> {
    this.detach();
    const tls = target.config.tls;
    if (!tls.enable) return this.close();
    const certs = target.services.resolve(tlsCertificatesRef) as { current(): TlsKeyPair | undefined; onChange(fn: (p: TlsKeyPair) => void): () => void };
    const log = target.log.child({ component: 'HTTPS' });
    if (this.#server && this.#address !== tls.address) await this.close();
    this.#target = target;
    // a renewal, or the first automatic certificate: the listener opens when it arrives
    this.#unsubscribe = certs.onChange((next) => {
      if (this.#server) {
        this.#server.setSecureContext({ ...next });
        log.info('certificate replaced');
      } else if (this.#target === target) {
        this.#open(target.config, next, reusePort).then(() => log.info({ port: this.port }, 'HTTPS listening'), (err: Error) => log.error({ err: err.message }, 'HTTPS cannot listen'));
      }
    });
    const pair = certs.current();
    if (!pair) {
      // the reference goes on without TLS until a certificate can be had
      log.warn(tls.auto ? 'no certificate yet: HTTPS opens once one is obtained' : 'no certificate available: HTTPS is off');
      return;
    }
    if (this.#server) this.#server.setSecureContext({ ...pair });
    else await this.#open(target.config, pair, reusePort);
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
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
  }

  async #open(config: ConfigData, pair: TlsKeyPair, reusePort?: number): Promise<void> {
    const address = config.tls.address;
    const { host, port } = listenAddress(address, config);
    const server = createServer({
      ...pair,
      // the same limits as the HTTP listener (core/http/server.ts)
      maxHeaderSize: 1024 * 1024, headersTimeout: 10_000, connectionsCheckingInterval: 2_000,
    }, (req, res) => this.#handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port: port === 0 && reusePort ? reusePort : port }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    this.#address = address;
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const target = this.#target;
    if (target) {
      target.http.routing(req, res);
      return;
    }
    res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' });
    res.end(JSON.stringify({ code: 503, message: 'Service Unavailable', details: ['the service is reloading'] }));
  }
}
