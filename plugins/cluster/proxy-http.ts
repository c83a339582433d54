import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, HttpForwarder, withoutHopByHop } from '../../sdk/index.ts';

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

export interface Upstream {
  /** Node id, for error details. */
  node: string;
  /** The node's `api_address` (`http(s)://host:port`). */
  base: string;
}

/**
 * Passes requests to other nodes with the SDK's forwarder (`HttpForwarder`: kept-alive
 * connections, bounded connecting, a read retried on a reused connection the peer had closed, a
 * client that leaves cancels): the request with its body (read whole before, see readBody), the
 * answer (status, headers, body) streamed as it comes back.
 */
export class HttpProxy {
  readonly #forwarder: HttpForwarder;

  constructor(connectMs = 3000) { this.#forwarder = new HttpForwarder({ connectMs, maxSockets: 256 }); }

  /**
   * Sends `request` with `body` to `to` with the `extra` headers (made for each attempt: a new
   * signature) and answers the client with what comes back. Resolves once the answer started (the
   * reply is then hijacked); throws a 502 ApiError when the node fails before answering, so the
   * core's error handler sends the Error body.
   */
  async forward(to: Upstream, request: FastifyRequest, reply: FastifyReply, extra: () => OutgoingHttpHeaders, body?: Buffer): Promise<void> {
    const r = await this.#forwarder.forward(request.raw, reply.raw, { to: to.base, headers: extra, body, onAnswer: () => reply.hijack() });
    if (!r.answered) throw proxyErrors.upstream(to.node, r.error.message);
  }

  /** A GET to `to`, read whole (a process list to merge); uncompressed. Throws when the node fails. */
  fetch(to: Upstream, path: string, headers: IncomingHttpHeaders | OutgoingHttpHeaders): Promise<{ status: number; type?: string; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const h = withoutHopByHop(headers, ['accept-encoding', 'content-length', 'transfer-encoding']);
      const up = this.#forwarder.request(to.base, 'GET', path, h, (res) => {
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
      const up = this.#forwarder.request(to.base, method, path, headers, (res) => { res.resume(); resolve(res.statusCode ?? 0); });
      const timer = setTimeout(() => up.destroy(new Error('timeout')), timeoutMs);
      up.on('close', () => clearTimeout(timer));
      up.on('error', () => resolve(0));
      up.end();
    });
  }

  close(): void { this.#forwarder.close(); }
}
