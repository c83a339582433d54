import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../sdk/index.ts';

/** Errors of the proxy, with stable codes (never a 500 for a peer that does not answer). */
export const proxyErrors = {
  /** The node that has the process or file did not answer (refused, reset, timed out). */
  upstream: (node: string, why: string) => new ApiError(502, 'Bad Gateway', [`node ${node} did not answer: ${why}`], 'CLUSTER_PROXY_FAILED'),
  /** A request another node passed on, before this node read the cluster's signing key. */
  notReady: () => new ApiError(503, 'Service Unavailable', ['this node is not ready for cluster requests yet'], 'CLUSTER_NOT_READY'),
  /** A body to pass on larger than the route takes (the owner would refuse it too). */
  tooLarge: () => new ApiError(413, 'Payload Too Large', ['request body is larger than allowed'], 'BODY_TOO_LARGE'),
};

/**
 * The whole body of a request to pass on, or undefined for none (GET, HEAD, no length and no
 * chunks). Proxied bodies are the process API's JSON, bounded by the route's body limit
 * (`api.max_body_size_mbytes`), so buffering one costs what the owner's parser holds anyway;
 * the signed client header covers it (peer.ts).
 */
export async function readBody(request: FastifyRequest): Promise<Buffer | undefined> {
  const h = request.headers;
  if (request.method === 'GET' || request.method === 'HEAD') return undefined;
  if (h['transfer-encoding'] === undefined && (h['content-length'] === undefined || h['content-length'] === '0')) return undefined;
  const limit = request.routeOptions.bodyLimit;
  if (Number(h['content-length']) > limit) throw proxyErrors.tooLarge();
  const chunks: Buffer[] = [];
  let size = 0;
  // not destroyed on a refusal: the core drains the rest and delivers the 413 (unread-body.ts)
  for await (const chunk of request.raw.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > limit) throw proxyErrors.tooLarge();
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** Hop-by-hop headers describe one connection, not the request; never passed on. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'te', 'trailer', 'transfer-encoding', 'expect'];

export interface Upstream {
  /** Node id, for error details. */
  node: string;
  /** The node's `api_address` (`http(s)://host:port`). */
  base: string;
}

/**
 * Passes requests to other nodes over kept-alive connections: the request with its body (read
 * whole before, see readBody), the answer (status, headers, body) streamed as it comes back.
 */
export class HttpProxy {
  #http = new HttpAgent({ keepAlive: true, maxSockets: 256 });
  #https = new HttpsAgent({ keepAlive: true, maxSockets: 256 });
  #connectMs: number;

  constructor(connectMs = 3000) { this.#connectMs = connectMs; }

  /**
   * Sends `request` with `body` to `to` with the `extra` headers (made for each attempt: a new
   * signature) and answers the client with what comes back. Resolves once the answer started (the
   * reply is then hijacked); throws a 502 ApiError when the node fails before answering, so the
   * core's error handler sends the Error body.
   */
  forward(to: Upstream, request: FastifyRequest, reply: FastifyReply, extra: () => OutgoingHttpHeaders, body?: Buffer, retried = false): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const headers: OutgoingHttpHeaders = { ...withoutHopByHop(request.headers), ...extra() };
      delete headers['content-length'];
      if (body) headers['content-length'] = body.length;
      const up = this.#request(to, request.method, request.url, headers, (res) => {
        const out = reply.raw;
        reply.hijack();
        out.writeHead(res.statusCode ?? 502, res.statusMessage, withoutHopByHop(res.headers));
        res.pipe(out);
        res.on('error', () => out.destroy());
        resolve();
      });
      up.on('error', (err) => {
        if (reply.sent) { reply.raw.destroy(); return; }
        // a kept-alive connection the peer closed just as it was reused: a read is safe to resend
        if (up.reusedSocket && !retried && (request.method === 'GET' || request.method === 'HEAD')) {
          this.forward(to, request, reply, extra, body, true).then(resolve, reject);
          return;
        }
        reject(proxyErrors.upstream(to.node, err.message));
      });
      // a client that goes away takes its proxied request with it
      reply.raw.on('close', () => { if (!reply.raw.writableFinished) up.destroy(); });
      up.end(body);
    });
  }

  /** A GET to `to`, read whole (a process list to merge); uncompressed. Throws when the node fails. */
  fetch(to: Upstream, path: string, headers: IncomingHttpHeaders | OutgoingHttpHeaders): Promise<{ status: number; type?: string; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const h: OutgoingHttpHeaders = withoutHopByHop(headers as IncomingHttpHeaders);
      delete h['accept-encoding'];
      delete h['content-length'];
      const up = this.#request(to, 'GET', path, h, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 502, type: res.headers['content-type'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      up.on('error', reject);
      up.end();
    });
  }

  /** A bodiless request (HEAD probe) to `to`: its status, or 0 when the node failed or took too long. */
  probe(to: Upstream, method: 'HEAD', path: string, headers: OutgoingHttpHeaders, timeoutMs: number): Promise<number> {
    return new Promise<number>((resolve) => {
      const up = this.#request(to, method, path, headers, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      const timer = setTimeout(() => up.destroy(new Error('timeout')), timeoutMs);
      up.on('close', () => clearTimeout(timer));
      up.on('error', () => resolve(0));
      up.end();
    });
  }

  #request(to: Upstream, method: string, path: string, headers: OutgoingHttpHeaders, onResponse: (res: IncomingMessage) => void): ClientRequest {
    const url = new URL(to.base);
    const https = url.protocol === 'https:';
    const opts = {
      host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port || (https ? 443 : 80), method, path, headers,
      agent: https ? this.#https : this.#http,
    };
    const up = https ? httpsRequest(opts, onResponse) : httpRequest(opts, onResponse);
    // only connecting is bounded: a probe or a long answer may legitimately take its time
    up.on('socket', (s) => {
      if (!s.connecting) return;
      const timer = setTimeout(() => up.destroy(new Error(`no connection within ${this.#connectMs} ms`)), this.#connectMs);
      s.once('connect', () => clearTimeout(timer));
      s.once('close', () => clearTimeout(timer));
    });
    return up;
  }

  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}

function withoutHopByHop(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...h };
  for (const k of HOP_BY_HOP) delete out[k];
  return out;
}
