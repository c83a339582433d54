import { Agent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { Duplex } from 'node:stream';
import { THREAD_PEER_HEADER } from '../../../sdk/serving-threads.ts';
import { normalizeIp } from '../../../sdk/client-address.ts';
import { DEFAULT_DRAIN, hasBody, lingerClose } from '../unread-body.ts';
import { signPeer } from './peer-header.ts';

/** How long a joined upgrade connection stays after one side ended its half. */
const TUNNEL_HALF_OPEN_MS = 5000;

/** Hop-by-hop headers: they describe one connection, not the request, and are not passed on. */
const HOP = ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer'];

function strip(headers: IncomingHttpHeaders, extra: readonly string[]): IncomingHttpHeaders {
  const out = { ...headers };
  for (const h of HOP) delete out[h];
  for (const h of extra) delete out[h];
  return out;
}

/**
 * Passes a request a serving thread does not answer (over HTTP or HTTPS) to the main thread's
 * internal listener, with the client's TCP peer and protocol in the signed `THREAD_PEER_HEADER`,
 * and streams the answer back (uploads, SSE and long downloads stream both ways; nothing is buffered).
 */
export class Forwarder {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 512 });
  readonly #key: Buffer;
  readonly #port: number;
  /** Joined upgrade connections (the client's socket), destroyed by `close`. */
  readonly #tunnels = new Set<Duplex>();

  constructor(key: Buffer, port: number) {
    this.#key = key;
    this.#port = port;
  }

  /**
   * `expect`: the client sent `Expect: 100-continue` and waits: main decides (a refusal instead of
   * the 100, as for its own clients) and its 100 is relayed.
   */
  forward(req: IncomingMessage, res: ServerResponse, retried = false, expect = false): void {
    const headers = strip(req.headers, [THREAD_PEER_HEADER, 'expect']);
    if (expect) headers.expect = '100-continue';
    // the thread's HTTPS listener: main must see the request as HTTPS (api.access.https, request.protocol)
    const https = (req.socket as { encrypted?: boolean }).encrypted === true;
    headers[THREAD_PEER_HEADER] = signPeer(this.#key, normalizeIp(req.socket.remoteAddress ?? ''), https);
    let answered = false;
    const up = httpRequest({ host: '127.0.0.1', port: this.#port, method: req.method, path: req.url, headers, agent: this.#agent }, (ures) => {
      // transfer-encoding is this hop's: node frames the body again for the client
      const out = strip(ures.headers, ['transfer-encoding']);
      if (!req.complete && hasBody(req)) {
        // main refused before the body ended (401, 413, 507): the rest is read and dropped here, as
        // main does, so the client gets the answer instead of a reset; main's hop is done with
        req.unpipe(up);
        out.connection = 'close';
        // main gave up on a body that did not arrive in time (408): nothing more is waited for
        if (ures.statusCode === 408) res.once('finish', () => req.socket.destroy());
        else lingerClose(req, req.socket, DEFAULT_DRAIN);
        ures.on('end', () => { answered = true; up.destroy(); });
      }
      res.writeHead(ures.statusCode ?? 502, ures.statusMessage, out);
      ures.pipe(res);
      ures.on('error', () => res.destroy());
    });
    if (expect) up.on('continue', () => { if (!res.headersSent) res.writeContinue(); });
    up.on('error', () => {
      if (answered) return;
      // a kept-alive connection main closed just as it was reused: a read without body is safe to send again
      if (up.reusedSocket && !retried && !res.headersSent && (req.method === 'GET' || req.method === 'HEAD')) {
        this.forward(req, res, true);
        return;
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const body = JSON.stringify({ code: 502, message: 'Bad Gateway', details: ['the main thread did not answer'] });
      res.writeHead(502, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    // a client that goes away takes its forwarded request with it (a viewer leaving an SSE stream)
    res.on('close', () => { if (!res.writableFinished) up.destroy(); });
    // a retried read: its (empty) body was read already
    if (req.readableEnded) up.end();
    else req.pipe(up);
  }

  /**
   * An upgrade request (WebSocket): main's server gets it as sent, with the signed peer header
   * added, over a connection of its own, and from then on the two sockets are joined byte for
   * byte. Main answers it as it answers its own clients (a plugin's `upgrade` listener, or a
   * plain answer when nobody upgrades).
   */
  tunnel(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const https = (req.socket as { encrypted?: boolean }).encrypted === true;
    let text = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      if (raw[i]!.toLowerCase() !== THREAD_PEER_HEADER) text += `${raw[i]}: ${raw[i + 1]}\r\n`;
    }
    text += `${THREAD_PEER_HEADER}: ${signPeer(this.#key, normalizeIp(req.socket.remoteAddress ?? ''), https)}\r\n\r\n`;
    const up = connect(this.#port, '127.0.0.1');
    this.#tunnels.add(socket);
    let grace: NodeJS.Timeout | undefined;
    const end = () => {
      clearTimeout(grace);
      this.#tunnels.delete(socket);
      up.destroy();
      socket.destroy();
    };
    up.on('error', end);
    socket.on('error', end);
    up.on('close', end);
    socket.on('close', end);
    // one side ended (pipe ends the other): the rest of the answer may follow, for a while
    const halfClosed = () => { grace ??= setTimeout(end, TUNNEL_HALF_OPEN_MS).unref(); };
    up.on('end', halfClosed);
    socket.on('end', halfClosed);
    up.write(text);
    if (head.length > 0) up.write(head);
    up.pipe(socket);
    socket.pipe(up);
  }

  close(): void {
    this.#agent.destroy();
    for (const s of this.#tunnels) s.destroy();
  }
}
