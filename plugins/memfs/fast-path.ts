import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ApiError, THREAD_PEER_HEADER, fsServeTapped, normalizeIp, responseBytes, PlaylistRewrites,
  type CorsPolicy, type FastPathHandler, type FsServeHooks, type FsServeRequest,
} from '../../sdk/index.ts';
import type { MemFilesystem } from './service.ts';
import type { MemFileNode } from './entry.ts';
import { PREFIX, plainHead, plainPath } from './plain.ts';

/**
 * The hot path of HLS delivery: a plain GET or HEAD of a memfs file, answered from node's
 * request event with the header list built when the file was written and the file's own
 * Buffer (no copy). Anything else (ranges, conditionals, gzip, links, encoded or odd paths,
 * misses) returns false and takes the regular `/memfs/*` route, which handles all of it with
 * the same headers. The file-serving hooks run here too (only once the request is known to be
 * answered here, so the route never sees it twice); untapped, they cost three `isUsed` checks.
 */
export function memfsFastPath(fs: MemFilesystem, cors: CorsPolicy, hooks: FsServeHooks): FastPathHandler {
  const rewrites = new PlaylistRewrites();
  const heads = new WeakMap<string[], string[]>();
  const tapped = { hooks, rewrites, heads };
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const path = plainPath(req);
    if (path === undefined) return false;
    const node = fs.node(path);
    if (node?.kind !== 'file') return false;
    const head = plainHead(node, req, cors);
    if (head === undefined) return false;
    if (fsServeTapped(hooks)) {
      // who a forwarded request comes from is the front door's call (trusted proxies, serving threads): the route has it
      const h = req.headers;
      if (h['x-forwarded-for'] !== undefined || h['x-real-ip'] !== undefined || h[THREAD_PEER_HEADER] !== undefined) return false;
      const url = req.url!;
      const q = url.indexOf('?', PREFIX.length);
      return hooked(tapped, node, head, path, q < 0 ? '' : url.slice(q + 1), req, res);
    }
    res.writeHead(200, head);
    if (req.method === 'HEAD') res.end();
    else res.end(node.file.data);
    return true;
  };
}

/** The same answer with `preServe`, `transformPlaylist` and `onServed` around it. */
interface Tapped {
  hooks: FsServeHooks;
  rewrites: PlaylistRewrites;
  /** Per header list, the same without ETag and Content-Length (for rewritten playlists). */
  heads: WeakMap<string[], string[]>;
}

function hooked(t: Tapped, node: MemFileNode, head: string[], path: string, query: string, req: IncomingMessage, res: ServerResponse): boolean {
  const hooks = t.hooks;
  const sreq: FsServeRequest = {
    mount: '/memfs', path, query, remote: normalizeIp(req.socket.remoteAddress ?? ''), headers: req.headers,
    method: req.method === 'HEAD' ? 'HEAD' : 'GET',
  };
  const refusal = hooks.preServe.isUsed() ? hooks.preServe.call(sreq) : undefined;
  if (refusal) {
    // the same Error body the route sends for this refusal; HEAD gets the status alone, as every HEAD error
    if (sreq.method === 'HEAD') {
      res.writeHead(refusal.status);
      res.end();
      return true;
    }
    const body = JSON.stringify(new ApiError(refusal.status, refusal.message, refusal.details).toBody());
    res.writeHead(refusal.status, ['content-type', 'application/json; charset=utf-8', 'content-length', String(Buffer.byteLength(body))]);
    res.end(body);
    return true;
  }
  let data = node.file.data!;
  const rewritten = t.rewrites.apply(hooks, sreq, path, data);
  if (rewritten) {
    data = rewritten;
    // the rewritten body is this viewer's own: no shared validator, not for shared caches
    let base = t.heads.get(head);
    if (!base) {
      base = withoutValidators(head);
      t.heads.set(head, base);
    }
    head = base.concat('content-length', String(data.length), 'cache-control', 'private');
  }
  res.writeHead(200, head);
  const body = sreq.method === 'HEAD' ? 0 : data.length;
  if (body === 0) res.end();
  else res.end(data);
  if (hooks.onServed.isUsed()) hooks.onServed.call({ request: sreq, status: 200, bytes: responseBytes(res, body) });
  return true;
}

function withoutValidators(head: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < head.length; i += 2) {
    if (head[i] !== 'etag' && head[i] !== 'content-length') out.push(head[i]!, head[i + 1]!);
  }
  return out;
}
