import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { THREAD_PEER_HEADER } from './module.ts';
import { normalizeIp } from '../../../sdk/client-address.ts';
import { HttpForwarder, type ForwardUpstream } from '../../../sdk/forward.ts';
import { signPeer } from './peer-header.ts';

const STRIP = [THREAD_PEER_HEADER];

/**
 * Passes a request a serving thread does not answer (over HTTP or HTTPS) to the main thread's
 * internal listener with the SDK's forwarder (streamed both ways, nothing buffered), the client's
 * TCP peer and protocol in the signed `THREAD_PEER_HEADER` (peer-header.ts).
 */
export class Forwarder {
  readonly #http = new HttpForwarder({ maxSockets: 512 });
  readonly #key: Buffer;
  readonly #to: ForwardUpstream;

  constructor(key: Buffer, port: number) {
    this.#key = key;
    this.#to = { host: '127.0.0.1', port };
  }

  /**
   * `expect`: the client sent `Expect: 100-continue` and waits: main decides (a refusal instead of
   * the 100, as for its own clients) and its 100 is relayed. Main not answering: a 502.
   */
  forward(req: IncomingMessage, res: ServerResponse, expect = false): void {
    void this.#http.forward(req, res, { to: this.#to, expect, strip: STRIP, headers: () => this.#peer(req) }).then((r) => {
      if (r.answered || res.headersSent || res.destroyed) return;
      const body = JSON.stringify({ code: 502, message: 'Bad Gateway', details: ['the main thread did not answer'] });
      res.writeHead(502, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  }

  /**
   * An upgrade request (WebSocket): main's server gets it as sent, with the signed peer header,
   * and the two sockets are joined. Main answers it as its own clients (a plugin's `upgrade`
   * listener, or a plain answer when nobody upgrades).
   */
  tunnel(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#http.tunnel(req, socket, head, { to: this.#to, strip: STRIP, headers: () => this.#peer(req) });
  }

  /** The signed peer header for one attempt (a fresh nonce and time each). */
  #peer(req: IncomingMessage): Record<string, string> {
    // the thread's HTTPS listener: main must see the request as HTTPS (api.access.https, request.protocol)
    const https = (req.socket as { encrypted?: boolean }).encrypted === true;
    return { [THREAD_PEER_HEADER]: signPeer(this.#key, normalizeIp(req.socket.remoteAddress ?? ''), https, req.method ?? 'GET', req.url ?? '/') };
  }

  close(): void { this.#http.close(); }
}
