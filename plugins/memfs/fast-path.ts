import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPlainFsPath, type CorsPolicy, type FastPathHandler } from '../../sdk/index.ts';
import type { MemFilesystem } from './service.ts';

const PREFIX = '/memfs/';

/**
 * The hot path of HLS delivery: a plain GET or HEAD of a memfs file, answered from node's
 * request event with the header list built when the file was written and the file's own
 * Buffer (no copy). Anything else (ranges, conditionals, gzip, links, encoded or odd paths,
 * misses) returns false and takes the regular `/memfs/*` route, which handles all of it with
 * the same headers.
 */
export function memfsFastPath(fs: MemFilesystem, cors: CorsPolicy): FastPathHandler {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const method = req.method;
    if (method !== 'GET' && method !== 'HEAD') return false;
    const url = req.url!;
    if (!url.startsWith(PREFIX)) return false;
    const q = url.indexOf('?', PREFIX.length);
    const path = q < 0 ? url.slice(PREFIX.length - 1) : url.slice(PREFIX.length - 1, q);
    if (!isPlainFsPath(path)) return false;
    const node = fs.open(path);
    if (node?.kind !== 'file') return false;
    const h = req.headers;
    if (h.range !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return false;
    if (node.zip && h['accept-encoding'] !== undefined) return false;
    let head = node.head;
    const origin = h.origin;
    if (origin !== undefined) {
      const allowed = cors.allow(origin);
      if (allowed !== undefined) {
        head = head.concat('access-control-allow-origin', allowed, 'access-control-allow-credentials', 'true',
          'access-control-expose-headers', 'Content-Length');
      }
    }
    res.writeHead(200, head);
    if (method === 'HEAD') res.end();
    else res.end(node.file.data);
    return true;
  };
}
