import type * as Http from 'node:http';
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type * as Https from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { ipFamily } from './ip.ts';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { DEFAULT_DRAIN, lingerClose, requestHasBody, type DrainBounds } from './linger-close.ts';

// node:http and node:https as `require` gives them: their ES facade (an `import { request }`) loads
// undici at every start for nothing (issue 46.4; the core's runtime/builtin.ts says more)
const builtin = (process as unknown as { getBuiltinModule(id: string): unknown }).getBuiltinModule.bind(process);
const { Agent: HttpAgent, request: httpRequest } = builtin('node:http') as typeof Http;
const { Agent: HttpsAgent, request: httpsRequest } = builtin('node:https') as typeof Https;
/*
 * The one forwarder of the service: a serving thread passing a request to main, a cluster node
 * passing one to the node that owns the process. Plain node:http (no fastify), loaded by worker
 * threads: it imports SDK files one by one.
 */

/**
 * Where requests go: a base URL (`http://host:port`, `https://...`; its path is ignored) or a
 * host and port.
 *
 * @example
 * const to: ForwardUpstream = { host: '127.0.0.1', port: 8081 };
 */
export type ForwardUpstream = string | { host: string; port: number; https?: boolean };

/** How one request is passed on. */
export interface ForwardOptions {
  to: ForwardUpstream;
  /** Headers added to each attempt (a retry gets new ones: a fresh signature). */
  headers?: () => OutgoingHttpHeaders;
  /** Request headers never passed on, besides the hop-by-hop ones (a signed header a client sent). */
  strip?: readonly string[];
  /** The body, read whole already: sent with its length. Without it the request streams. */
  body?: Buffer;
  /** The client sent `Expect: 100-continue` and waits: the upstream decides, its 100 is relayed. */
  expect?: boolean;
  /** Called right before the answer's head is written (a fastify reply is hijacked there). */
  onAnswer?: () => void;
}

/**
 * How a forward ended: the answer started (streamed on, whatever happens later), or the upstream
 * failed before answering and the client is the caller's to answer (a 502).
 *
 * @example
 * const r = await forwarder.forward(req, res, { to });
 * if (!r.answered) res.writeHead(502).end(r.error.message);
 */
export type ForwardResult = { answered: true } | { answered: false; error: Error };

/** The forwarder's bounds. */
export interface HttpForwarderOptions {
  /** Milliseconds to connect (default 3000); an answer may take its time. */
  connectMs?: number;
  /** Kept-alive connections per upstream and protocol at most (default 256). */
  maxSockets?: number;
  /** How much of a body the upstream refused early is read and dropped (default `DEFAULT_DRAIN`). */
  drain?: DrainBounds;
  /** How long a joined upgrade connection stays after one side ended its half (default 5000). */
  halfOpenMs?: number;
}

/** Hop-by-hop headers: they describe one connection, not the request, and are not passed on. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer', 'expect'];

/**
 * A copy of `headers` without the hop-by-hop ones and the `extra` names (lower case).
 *
 * @example
 * const out = withoutHopByHop(upstream.headers, ['transfer-encoding']);
 */
export function withoutHopByHop(headers: IncomingHttpHeaders | OutgoingHttpHeaders, extra: readonly string[] = []): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...headers };
  for (const h of HOP_BY_HOP) delete out[h];
  for (const h of extra) delete out[h];
  return out;
}

interface Target { host: string; port: number; https: boolean }

function targetOf(to: ForwardUpstream): Target {
  if (typeof to !== 'string') return { host: to.host, port: to.port, https: to.https === true };
  const url = new URL(to);
  const https = url.protocol === 'https:';
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || (https ? 443 : 80), https };
}

/**
 * Passes requests on over kept-alive connections and streams the answers back: the body streams
 * (or goes whole when given), `100 Continue` is relayed, a body the upstream refused before it
 * ended is read and dropped so the client gets the refusal instead of a reset, a GET or HEAD
 * whose reused connection the upstream had just closed is sent once more, connecting is bounded,
 * and a client that goes away cancels the upstream request. Upgrade requests are joined to the
 * upstream byte for byte (`tunnel`).
 *
 * @example
 * const forwarder = new HttpForwarder({ connectMs: 2000 });
 * const r = await forwarder.forward(req, res, { to: 'http://10.0.0.2:8080', headers: () => ({ [HEADER]: sign(req) }) });
 * if (!r.answered) res.writeHead(502).end();
 */
export class HttpForwarder {
  readonly #connectMs: number;
  readonly #maxSockets: number;
  readonly #drain: DrainBounds;
  readonly #halfOpenMs: number;
  #http: Http.Agent | undefined;
  #https: Https.Agent | undefined;
  /** Joined upgrade connections (the client's socket), destroyed by `close`. */
  readonly #tunnels = new Set<Duplex>();

  constructor(options: HttpForwarderOptions = {}) {
    this.#connectMs = options.connectMs ?? 3000;
    this.#maxSockets = options.maxSockets ?? 256;
    this.#drain = options.drain ?? DEFAULT_DRAIN;
    this.#halfOpenMs = options.halfOpenMs ?? 5000;
  }

  /** Sends `req` to `o.to` and answers `res` with what comes back; resolves once the answer started or failed. */
  forward(req: IncomingMessage, res: ServerResponse, o: ForwardOptions): Promise<ForwardResult> {
    return new Promise((resolve) => this.#attempt(req, res, o, false, resolve));
  }

  #attempt(req: IncomingMessage, res: ServerResponse, o: ForwardOptions, retried: boolean, done: (r: ForwardResult) => void): void {
    const headers = withoutHopByHop(req.headers, o.strip);
    if (o.expect) headers.expect = '100-continue';
    if (o.body) {
      delete headers['transfer-encoding'];
      headers['content-length'] = o.body.length;
    }
    Object.assign(headers, o.headers?.());
    let over = false;
    const method = req.method ?? 'GET';
    const up = this.request(o.to, method, req.url ?? '/', headers, (ures) => {
      // transfer-encoding is this hop's: node frames the body again for the client
      const out = withoutHopByHop(ures.headers, ['transfer-encoding']);
      if (!req.complete && requestHasBody(req)) {
        // refused before the body ended (401, 413, 507): the rest is read and dropped here, as
        // the upstream does, so the client gets the answer instead of a reset
        req.unpipe(up);
        out.connection = 'close';
        // the upstream gave up on a body that did not arrive in time (408): nothing more is waited for
        if (ures.statusCode === 408) res.once('finish', () => req.socket.destroy());
        else lingerClose(req, req.socket, this.#drain);
        ures.on('end', () => { over = true; up.destroy(); });
      } else if (ures.headers.connection === 'close' && requestHasBody(req)) {
        // the upstream closes after refusing a body that had arrived whole: so does the client's connection
        out.connection = 'close';
      }
      o.onAnswer?.();
      res.writeHead(ures.statusCode ?? 502, ures.statusMessage, out);
      ures.pipe(res);
      ures.on('error', () => res.destroy());
      done({ answered: true });
    });
    if (o.expect) up.on('continue', () => { if (!res.headersSent) res.writeContinue(); });
    up.on('error', (error) => {
      if (over) return;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // a kept-alive connection the upstream closed just as it was reused: a read is safe to send again
      if (up.reusedSocket && !retried && (method === 'GET' || method === 'HEAD')) {
        this.#attempt(req, res, o, true, done);
        return;
      }
      done({ answered: false, error });
    });
    // a client that goes away takes its forwarded request with it (a viewer leaving an SSE stream)
    res.on('close', () => { if (!res.writableFinished) up.destroy(); });
    if (o.body) up.end(o.body);
    // a retried read: its (empty) body was read already
    else if (req.readableEnded) up.end();
    else {
      // node's client holds the headers back until the first body byte: the upstream must see the
      // request at once (it may refuse it before any byte, a 401 the client waits for)
      up.flushHeaders();
      req.pipe(up);
    }
  }

  /**
   * One request to `to` over the forwarder's kept-alive connections, connecting within the
   * bound; the caller ends it and listens for `error`.
   *
   * @example
   * const up = forwarder.request('http://10.0.0.2:8080', 'HEAD', '/x.ts', {}, (res) => { res.resume(); });
   * up.on('error', () => {});
   * up.end();
   */
  request(to: ForwardUpstream, method: string, path: string, headers: OutgoingHttpHeaders, onResponse: (res: IncomingMessage) => void): ClientRequest {
    const t = targetOf(to);
    const opts = { host: t.host, port: t.port, method, path, headers, agent: this.#agent(t.https) };
    const up = t.https ? httpsRequest(opts, onResponse) : httpRequest(opts, onResponse);
    // only connecting is bounded: a probe or a long answer may legitimately take its time
    up.on('socket', (s) => {
      if (!s.connecting) return;
      const timer = setTimeout(() => up.destroy(new Error(`no connection within ${this.#connectMs} ms`)), this.#connectMs);
      s.once('connect', () => clearTimeout(timer));
      s.once('close', () => clearTimeout(timer));
    });
    return up;
  }

  #agent(https: boolean): Http.Agent {
    if (https) return (this.#https ??= new HttpsAgent({ keepAlive: true, maxSockets: this.#maxSockets }));
    return (this.#http ??= new HttpAgent({ keepAlive: true, maxSockets: this.#maxSockets }));
  }

  /**
   * An upgrade request (WebSocket): the upstream gets it as sent (less `strip`, plus `headers`)
   * over a connection of its own, and from then on the two sockets are joined byte for byte.
   */
  tunnel(req: IncomingMessage, socket: Duplex, head: Buffer, o: Pick<ForwardOptions, 'to' | 'headers' | 'strip'>): void {
    const extra = o.headers?.() ?? {};
    const skip = new Set([...(o.strip ?? []), ...Object.keys(extra).map((k) => k.toLowerCase())]);
    let text = `${req.method} ${req.url} HTTP/${req.httpVersion}\r\n`;
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) {
      if (!skip.has(raw[i]!.toLowerCase())) text += `${raw[i]}: ${raw[i + 1]}\r\n`;
    }
    for (const [k, v] of Object.entries(extra)) {
      for (const one of v === undefined ? [] : Array.isArray(v) ? v : [v]) text += `${k}: ${one}\r\n`;
    }
    const up = this.#connect(targetOf(o.to));
    this.#join(socket, up);
    up.write(`${text}\r\n`);
    if (head.length > 0) up.write(head);
  }

  #connect(t: Target): Socket {
    const up = t.https ? tlsConnect({ host: t.host, port: t.port, servername: ipFamily(t.host) ? undefined : t.host }) : netConnect(t.port, t.host);
    const timer = setTimeout(() => up.destroy(new Error(`no connection within ${this.#connectMs} ms`)), this.#connectMs);
    up.once(t.https ? 'secureConnect' : 'connect', () => clearTimeout(timer));
    up.once('close', () => clearTimeout(timer));
    return up;
  }

  #join(socket: Duplex, up: Socket): void {
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
    const halfClosed = () => { grace ??= setTimeout(end, this.#halfOpenMs).unref(); };
    up.on('end', halfClosed);
    socket.on('end', halfClosed);
    up.pipe(socket);
    socket.pipe(up);
  }

  /** Ends every kept-alive connection and joined upgrade connection. */
  close(): void {
    this.#http?.destroy();
    this.#https?.destroy();
    for (const s of this.#tunnels) s.destroy();
  }
}
