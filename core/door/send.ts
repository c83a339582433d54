import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { gzipSync, createGzip, constants as zc } from 'node:zlib';
// the SDK's files one by one, not its index: this module runs in every serving thread too
import { parseRange } from '../../sdk/fs-send.ts';
import { isCompressible } from '../../sdk/fs-mime.ts';
import type { FsFile } from '../../sdk/fs.ts';
import { refusal } from './answer-error.ts';

/*
 * One file on the wire, for the door on main and in every serving thread: Content-Type,
 * Last-Modified, ETag, 304 for If-None-Match / If-Modified-Since, single byte ranges (206, 416
 * with the Error body), gzip for text-ish files of 1000 bytes or more, HEAD without a body. Files
 * held in memory are sent as they are (a range is a view), others are streamed.
 */

/** Headers of a plain answer, built once per file version and type (the hot path sends them as they are). */
const plainHeads = new WeakMap<FsFile, { type: string; head: string[] }>();

const unquote = (t: string) => t.trim().replace(/^W\//, '');

function matchesEtag(header: string, a: string, b: string): boolean {
  if (header.trim() === '*') return true;
  for (const t of header.split(',')) {
    const u = unquote(t);
    if (u === a || u === b) return true;
  }
  return false;
}

function notModified(req: IncomingMessage, etag: string, zipped: string, mtimeMs: number): boolean {
  const inm = req.headers['if-none-match'];
  if (inm !== undefined) return matchesEtag(inm, etag, zipped);
  const ims = req.headers['if-modified-since'];
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

/** The headers every answer with `file` carries (before CORS, ranges and encodings). */
function baseHead(file: FsFile, type: string, zip: boolean): string[] {
  return ['vary', zip ? 'Origin, Accept-Encoding' : 'Origin', 'content-type', type,
    'last-modified', file.lastModified ?? new Date(file.mtimeMs).toUTCString(), 'accept-ranges', 'bytes'];
}

/**
 * Sends `file` (its type `type`) with the `extra` headers (CORS, cache) in front; returns the body
 * bytes sent (0 for HEAD, 304, 416).
 */
export function sendFile(req: IncomingMessage, res: ServerResponse, file: FsFile, type: string, extra: readonly string[]): number {
  const h = req.headers;
  const head = req.method === 'HEAD';
  const zip = file.size >= 1000 && isCompressible(type);
  // the common case: no range, no validator, no encoding to choose
  if (h.range === undefined && h['if-none-match'] === undefined && h['if-modified-since'] === undefined && !(zip && h['accept-encoding'] !== undefined)) {
    let memo = plainHeads.get(file);
    // one file served under two types (a mount and the API differ for unknown extensions): the last one is kept
    if (memo === undefined || memo.type !== type) {
      memo = { type, head: [...baseHead(file, type, zip), 'etag', file.etag, 'content-length', String(file.size)] };
      plainHeads.set(file, memo);
    }
    const plain = memo.head;
    res.writeHead(200, extra.length === 0 ? plain : [...extra, ...plain]);
    return body(res, file, head, 0, file.size - 1);
  }
  const out = [...extra, ...baseHead(file, type, zip)];
  let etag = file.etag;
  const ae = h['accept-encoding'];
  const gzip = zip && !head && h.range === undefined && ae !== undefined && /\bgzip\b/i.test(ae);
  if (gzip) etag = `${file.etag.slice(0, -1)}-gzip"`;
  out.push('etag', etag);
  if ((h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) && notModified(req, file.etag, etag, file.mtimeMs)) {
    file.release?.();
    res.writeHead(304, out);
    res.end();
    return 0;
  }
  const ifRange = h['if-range'];
  const range = head || h.range === undefined || !rangeStillValid(typeof ifRange === 'string' ? ifRange : undefined, file.etag, file.mtimeMs)
    ? undefined : parseRange(h.range, file.size);
  if (range === null) {
    file.release?.();
    refusal(res, 416, 'Range Not Satisfiable', [`bytes ${h.range!.slice(0, 100)} of ${file.size}`], [...extra, 'content-range', `bytes */${file.size}`]);
    return 0;
  }
  if (range) {
    out.push('content-range', `bytes ${range.start}-${range.end}/${file.size}`, 'content-length', String(range.end - range.start + 1));
    res.writeHead(206, out);
    return body(res, file, false, range.start, range.end);
  }
  if (gzip) {
    out.push('content-encoding', 'gzip');
    if (file.data && (file.gzip !== undefined || file.data.length <= SYNC_GZIP_MAX)) {
      // memo on the (immutable) file object: a playlist is compressed once per version, not per request
      file.gzip ??= gzipSync(file.data, { level: zc.Z_BEST_SPEED });
      out.push('content-length', String(file.gzip.length));
      res.writeHead(200, out);
      res.end(file.gzip);
      return file.gzip.length;
    }
    res.writeHead(200, out);
    // a large file in memory is compressed off the main thread (zlib's pool) and not kept: 40 MB
    // took 0.9-1.4 s of the main thread, and the copy stayed outside the filesystem's limit
    const zipped = createGzip({ level: zc.Z_BEST_SPEED });
    if (file.data) {
      pipeline(zipped, res, () => {});
      zipped.end(file.data);
    } else pipeline(file.stream!(0, file.size - 1), zipped, res, () => {});
    return file.size;
  }
  out.push('content-length', String(file.size));
  res.writeHead(200, out);
  return body(res, file, head, 0, file.size - 1);
}

/** The largest file in memory compressed on the main thread and kept compressed (a playlist, a manifest). */
const SYNC_GZIP_MAX = 256 * 1024;

/** The bytes `start..end` of `file` (none for HEAD or an empty file). */
function body(res: ServerResponse, file: FsFile, head: boolean, start: number, end: number): number {
  if (head || end < start) {
    file.release?.();
    res.end();
    return 0;
  }
  if (file.data) {
    res.end(start === 0 && end === file.data.length - 1 ? file.data : file.data.subarray(start, end + 1));
  } else {
    pipeline(file.stream!(start, end), res, () => {});
  }
  return end - start + 1;
}
