import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
// the SDK's files one by one, not its index: every module loaded here costs memory per thread
import { CorsPolicy } from '../../sdk/fs-cors.ts';
import { responseBytes } from '../../sdk/fs-hooks.ts';
import { MimeTable, isCompressible } from '../../sdk/fs-mime.ts';
import { fsExtension, isPlainFsPath } from '../../sdk/fs-path.ts';
import { ServedBatcher } from '../../sdk/fs-thread-serve.ts';
import type { FsFile } from '../../sdk/fs.ts';
import type { ThreadFastPath, ThreadModuleContext } from '../../sdk/serving-threads.ts';
import { DiskCache } from './cache.ts';
import { openDiskNode } from './open.ts';
import { DiskRoot } from './root.ts';
import type { DiskThreadInit, DiskThreadState } from './threads.ts';

/**
 * disk-fs in a serving thread: a plain GET/HEAD of a file under the disk root, opened with the
 * same rules as main (openDiskNode: hidden files, symlinks out of the root refused) and answered
 * with the headers main's mount sends. Everything else returns false and main answers it, with its
 * own status: misses (404), folders (index.html), links (301), paths out of the root (403), odd or
 * encoded paths (400 for `..`), ranges and conditionals, gzip, playlists (their disk paths are
 * rewritten), files main's HTTP cache keeps, paths under another route, and with the file hooks
 * tapped what `preServe` must see.
 */
export default function diskThread(ctx: ThreadModuleContext): ThreadFastPath {
  const init = ctx.init as DiskThreadInit;
  const root = new DiskRoot(init.dir, init.real, [...init.reserved]);
  const cors = new CorsPolicy(init.corsOrigins);
  const mime = MimeTable.load(init.mimetypesFile);
  // the cache's rules only (which files main keeps in memory, and its SKIP headers): no content here
  const cache = init.cache ? new DiskCache(init.cache) : undefined;
  let state = (ctx.snapshot as DiskThreadState | undefined) ?? { mode: 'none', heads: [] };
  let heads = new Set(state.heads);
  const reports = new ServedBatcher((batch) => ctx.send(batch));
  ctx.onMessage((m) => {
    state = m as DiskThreadState;
    heads = new Set(state.heads);
  });

  /** Opens and answers, or resolves false having sent nothing. */
  async function serve(path: string, query: string, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    let node;
    try {
      node = await openDiskNode(root, path);
    } catch {
      return false; // out of the root (403) or an I/O error: main's answer
    }
    if (node?.kind !== 'file') return false;
    const f = node.file;
    const type = mime.lookup(path) ?? 'text/html';
    const zip = f.size >= 1000 && isCompressible(type);
    const head = req.method === 'HEAD';
    let cacheHead: string[] = [];
    if (cache) {
      if (head) cacheHead = ['x-cache', 'SKIP ONLYGET'];
      else if (!cache.allows(path)) cacheHead = ['x-cache', 'SKIP EXT'];
      else if (!cache.fits(f.size)) cacheHead = ['x-cache', 'SKIP TOOBIG'];
    }
    // gzip, and what main's cache holds (or takes in now), are main's to answer
    if ((zip && req.headers['accept-encoding'] !== undefined) || (cache && cacheHead.length === 0) || res.destroyed) {
      f.release?.();
      return false;
    }
    res.writeHead(200, [...headers(f, type, zip, req), ...cacheHead]);
    const finished = () => {
      if (state.mode === 'segments') reports.add(req, path, query, responseBytes(res, head ? 0 : f.size));
    };
    if (head || f.size === 0) {
      f.release?.();
      res.end(finished);
    } else {
      res.once('finish', finished);
      pipeline(f.stream!(0, f.size - 1), res, () => {});
    }
    return true;
  }

  function headers(f: FsFile, type: string, zip: boolean, req: IncomingMessage): string[] {
    const out = ['vary', zip ? 'Origin, Accept-Encoding' : 'Origin'];
    const origin = req.headers.origin;
    const allowed = origin === undefined ? undefined : cors.allow(origin);
    if (allowed !== undefined) {
      out.push('access-control-allow-origin', allowed, 'access-control-allow-credentials', 'true', 'access-control-expose-headers', 'Content-Length');
    }
    out.push('content-type', type, 'last-modified', new Date(f.mtimeMs).toUTCString(), 'accept-ranges', 'bytes', 'etag', f.etag,
      'content-length', String(f.size));
    return out;
  }

  return (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    if (state.mode === 'none') return false;
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url!;
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path.length < 2 || !isPlainFsPath(path)) return false;
    const slash = path.indexOf('/', 1);
    const first = slash < 0 ? path.slice(1) : path.slice(1, slash);
    // `/api/...` is the API's (the disk route refuses it); other routes win over the catch-all
    if (first === 'api' || heads.has(first) || heads.has(':') || fsExtension(path) === '.m3u8') return false;
    const h = req.headers;
    if (h.range !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return false;
    // a forwarded client is main's to resolve (trusted proxies) before a report names it
    if (state.mode === 'segments' && (h['x-forwarded-for'] !== undefined || h['x-real-ip'] !== undefined)) return false;
    return serve(path, q < 0 ? '' : url.slice(q + 1), req, res);
  };
}
