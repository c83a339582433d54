import { Readable, pipeline } from 'node:stream';
import { constants, createGzip, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isCompressible, type HttpScope } from '../../sdk/index.ts';

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

type Done = (err: Error | null, payload?: unknown) => void;

/** `?pretty` (any value) indents a JSON body with 2 spaces (reference 2.3). */
function pretty(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (!wantsPretty(request.url) || typeof payload !== 'string' || !/json/.test(String(reply.getHeader('content-type') ?? ''))) return payload;
  try { return `${JSON.stringify(JSON.parse(payload), null, 2)}\n`; } catch { return payload; }
}

function prettyHook(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done): void {
  done(null, pretty(request, reply, payload));
}

/** gzip (best speed) for clients that accept it, bodies from 1000 bytes, `Vary` always (reference 2.5). */
function gzipHook(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: Done): void {
  const body = pretty(request, reply, payload);
  reply.header('vary', 'Accept-Encoding');
  if (!/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? '')) || reply.hasHeader('content-encoding') || request.method === 'HEAD') return done(null, body);
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    if (Buffer.byteLength(body) < GZIP_MIN_BYTES) return done(null, body);
    reply.header('content-encoding', 'gzip').removeHeader('content-length');
    return gzip(body, LEVEL, (err, out) => done(err, out));
  }
  if (body instanceof Readable && Number(reply.getHeader('content-length') ?? 0) >= GZIP_MIN_BYTES && isCompressible(String(reply.getHeader('content-type') ?? ''))) {
    reply.header('content-encoding', 'gzip').removeHeader('content-length');
    return done(null, pipeline(body, createGzip(LEVEL), () => { /* a failed read ends the reply; fastify logs it */ }));
  }
  done(null, body);
}

/**
 * Response encoding, attached per route as routes are declared (so it must be installed before
 * any): the API routes get `?pretty`, and gzip where the reference compresses. Routes outside
 * `/api` (the hot file mounts, /metrics, /ping) get no hook at all, so they pay nothing.
 */
export function installEncoding(http: HttpScope): void {
  http.addHook('onRoute', (route) => {
    const url = route.url;
    if (url !== '/api' && !url.startsWith('/api/')) return;
    const hook = gzipRoute(url) ? gzipHook : prettyHook;
    const existing = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...existing, hook] as typeof route.onSend;
  });
}
