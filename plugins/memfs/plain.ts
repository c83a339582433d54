import type { IncomingMessage } from 'node:http';
// the SDK's files one by one, not its index: this module also runs in every serving thread,
// where each module loaded costs memory per thread
import { isPlainFsPath } from '../../sdk/fs-path.ts';
import type { CorsPolicy } from '../../sdk/fs-cors.ts';
import type { MemFileNode } from './entry.ts';

export const PREFIX = '/memfs/';

/** The file path of a plain GET/HEAD under `/memfs/` (the only requests a fast path may take), else undefined. */
export function plainPath(req: IncomingMessage): string | undefined {
  const method = req.method;
  return method === 'GET' || method === 'HEAD' ? pathOf(req.url!) : undefined;
}

/** The file path of a PUT/POST under `/memfs/` with a plain path (what a serving thread may receive), else undefined. */
export function plainUploadPath(req: IncomingMessage): string | undefined {
  const method = req.method;
  return method === 'PUT' || method === 'POST' ? pathOf(req.url!) : undefined;
}

function pathOf(url: string): string | undefined {
  if (!url.startsWith(PREFIX)) return undefined;
  const q = url.indexOf('?', PREFIX.length);
  const path = q < 0 ? url.slice(PREFIX.length - 1) : url.slice(PREFIX.length - 1, q);
  return isPlainFsPath(path) ? path : undefined;
}

/**
 * The response headers of a plain answer with `node`, CORS included, or undefined when the route
 * must answer (ranges, conditionals, gzip).
 */
export function plainHead(node: Pick<MemFileNode, 'head' | 'zip'>, req: IncomingMessage, cors: CorsPolicy): string[] | undefined {
  const h = req.headers;
  if (h.range !== undefined || h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return undefined;
  if (node.zip && h['accept-encoding'] !== undefined) return undefined;
  const origin = h.origin;
  if (origin === undefined) return node.head;
  const allowed = cors.allow(origin);
  if (allowed === undefined) return node.head;
  return node.head.concat('access-control-allow-origin', allowed, 'access-control-allow-credentials', 'true',
    'access-control-expose-headers', 'Content-Length');
}
