import { Readable, pipeline } from 'node:stream';
import { promisify } from 'node:util';
import { constants, createGzip, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isCompressible, type HttpScope } from '../../sdk/index.ts';

const gzipAsync = promisify(gzip);
/** Bodies below this stay uncompressed (reference 2.5). */
export const GZIP_MIN_BYTES = 1000;
const LEVEL = { level: constants.Z_BEST_SPEED };

/** The routes the reference compresses: the v3 API (not the widget), GraphQL, the swagger. */
export function gzipRoute(url: string): boolean {
  if (url.startsWith('/api/v3/')) return !url.startsWith('/api/v3/widget/');
  return url.startsWith('/api/graph') || url.startsWith('/api/swagger');
}

/** `?pretty` with any value (reference 2.3); a substring test first keeps other requests cheap. */
function wantsPretty(url: string): boolean {
  const q = url.indexOf('?');
  return q >= 0 && url.includes('pretty', q) && new URLSearchParams(url.slice(q + 1)).has('pretty');
}

/**
 * `?pretty` indents JSON bodies (2 spaces) on every route; gzip (best speed) on the API routes
 * for clients that accept it, bodies from 1000 bytes, `Vary: Accept-Encoding` on those routes
 * always. One onSend hook on the root, installed before any route so every scope inherits it;
 * on other routes (the file mounts, /metrics) it costs two prefix checks.
 */
export function installEncoding(http: HttpScope): void {
  http.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const url = request.url;
    let body = payload;
    if (wantsPretty(url) && typeof body === 'string' && /json/.test(String(reply.getHeader('content-type') ?? ''))) {
      try { body = `${JSON.stringify(JSON.parse(body), null, 2)}\n`; } catch { /* not JSON after all: sent as is */ }
    }
    if (!gzipRoute(url)) return body;
    reply.header('vary', 'Accept-Encoding');
    if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) || reply.hasHeader('content-encoding') || request.method === 'HEAD') return body;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      if (Buffer.byteLength(body) < GZIP_MIN_BYTES) return body;
      reply.header('content-encoding', 'gzip').removeHeader('content-length');
      return gzipAsync(body, LEVEL);
    }
    if (body instanceof Readable && Number(reply.getHeader('content-length') ?? 0) >= GZIP_MIN_BYTES && isCompressible(String(reply.getHeader('content-type') ?? ''))) {
      reply.header('content-encoding', 'gzip').removeHeader('content-length');
      return pipeline(body, createGzip(LEVEL), () => { /* a failed read ends the reply; fastify logs it */ });
    }
    return body;
  });
}
