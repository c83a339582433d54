import { gzipSync, createGzip, constants as zc } from 'node:zlib';
import { pipeline } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import type { FsFile } from './fs.ts';
import { isCompressible, type MimeTable } from './fs-mime.ts';

/** How `sendFsFile` picks a content type. */
export interface SendFileOptions {
  mime: MimeTable;
  /** For extensions the table does not know: `application/data`, or `text/html` on the disk mount. */
  defaultType: string;
}

/**
 * The single byte range of a `Range` header, `null` when unsatisfiable, undefined to ignore it.
 *
 * @example
 * parseRange('bytes=-2', 10); // { start: 8, end: 9 }
 */
export function parseRange(header: string, size: number): { start: number; end: number } | null | undefined {
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return undefined; // malformed or several ranges: serve it all
  if (m[1] === '') {
    const n = Number(m[2]);
    return n === 0 || size === 0 ? null : { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? Infinity : Number(m[2]);
  if (end < start) return undefined;
  if (start >= size) return null;
  return { start, end: Math.min(end, size - 1) };
}

const unquote = (t: string) => t.trim().replace(/^W\//, '');

function matchesEtag(header: string, etags: string[]): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => etags.includes(unquote(t)));
}

function notModified(request: FastifyRequest, etags: string[], mtimeMs: number): boolean {
  const inm = request.headers['if-none-match'];
  if (inm !== undefined) return matchesEtag(inm, etags);
  const ims = request.headers['if-modified-since'];
  if (ims === undefined) return false;
  const since = Date.parse(ims);
  return !Number.isNaN(since) && Math.floor(mtimeMs / 1000) * 1000 <= since;
}

/** `If-Range` holds the current validator (strong ETag or exact date)? */
function rangeStillValid(ifRange: string | undefined, etag: string, mtimeMs: number): boolean {
  if (ifRange === undefined) return true;
  if (ifRange.startsWith('"')) return ifRange.trim() === etag;
  const d = Date.parse(ifRange);
  return !Number.isNaN(d) && Math.floor(mtimeMs / 1000) * 1000 === d;
}

function addVary(reply: FastifyReply, v: string): void {
  const cur = reply.getHeader('vary');
  reply.header('vary', cur ? `${String(cur)}, ${v}` : v);
}

/**
 * Sends one file: Content-Type, Last-Modified, ETag, `304` for If-None-Match/If-Modified-Since,
 * single byte ranges (`206`, `416` with the Error body), gzip for text-ish types of 1000 bytes or
 * more, and HEAD without a body. Files held in memory are sent as is (a range is a view, never
 * a copy), others are streamed. Register GET and HEAD as one route with `exposeHeadRoute: false`
 * so fastify's automatic HEAD route does not replace the Content-Length.
 *
 * @example
 * return sendFsFile(request, reply, '/live/x.m3u8', file, { mime, defaultType: 'application/data' });
 */
export function sendFsFile(request: FastifyRequest, reply: FastifyReply, path: string, file: FsFile, opts: SendFileOptions): FastifyReply {
  const type = file.mime ?? opts.mime.lookup(path) ?? opts.defaultType;
  const head = request.method === 'HEAD';
  const h = request.headers;
  reply.header('content-type', type);
  reply.header('last-modified', file.lastModified ?? new Date(file.mtimeMs).toUTCString());
  reply.header('accept-ranges', 'bytes');
  let etag = file.etag;
  let gzip = false;
  if (file.size >= 1000 && isCompressible(type)) {
    addVary(reply, 'Accept-Encoding');
    const ae = h['accept-encoding'];
    gzip = !head && h.range === undefined && ae !== undefined && /\bgzip\b/i.test(ae);
    if (gzip) etag = `${file.etag.slice(0, -1)}-gzip"`;
  }
  reply.header('etag', etag);
  if (h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) {
    if (notModified(request, [file.etag, etag], file.mtimeMs)) {
      file.release?.();
      return reply.code(304).send();
    }
  }
  if (head) {
    file.release?.();
    reply.header('content-length', String(file.size));
    return reply.send();
  }
  const ifRange = h['if-range'];
  const range = h.range === undefined || !rangeStillValid(typeof ifRange === 'string' ? ifRange : undefined, file.etag, file.mtimeMs)
    ? undefined : parseRange(h.range, file.size);
  if (range === null) {
    file.release?.();
    throw new ApiError(416, 'Range Not Satisfiable', [`bytes ${h.range} of ${file.size}`], 'FS_RANGE', { 'content-range': `bytes */${file.size}` });
  }
  if (range) {
    reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${file.size}`);
    reply.header('content-length', String(range.end - range.start + 1));
    return file.data ? sendBytes(reply, file.data.subarray(range.start, range.end + 1)) : reply.send(file.stream!(range.start, range.end));
  }
  if (gzip) {
    reply.header('content-encoding', 'gzip');
    if (file.data) {
      // memo on the (immutable) file object: a playlist is compressed once per version, not per request
      file.gzip ??= gzipSync(file.data, { level: zc.Z_BEST_SPEED });
      return reply.send(file.gzip);
    }
    return reply.send(pipeline(file.stream!(0, file.size - 1), createGzip({ level: zc.Z_BEST_SPEED }), () => {}));
  }
  reply.header('content-length', String(file.size));
  if (file.data) return sendBytes(reply, file.data);
  if (file.size === 0) {
    file.release?.();
    return reply.send(Buffer.alloc(0));
  }
  return reply.send(file.stream!(0, file.size - 1));
}

// fastify types a serializer as returning a string; a Buffer is sent as it is all the same
const asIs = ((b: Buffer) => b) as unknown as (payload: unknown) => string;

/**
 * fastify sends a Buffer as it is only when it lies over an ArrayBuffer: one over shared memory
 * (memfs bodies while serving threads run) would be serialized as JSON under a JSON content type.
 * Such a Buffer goes through a serializer that returns it unchanged (no copy).
 */
function sendBytes(reply: FastifyReply, data: Buffer): FastifyReply {
  if (data.buffer instanceof SharedArrayBuffer) reply.serializer(asIs);
  return reply.send(data);
}
