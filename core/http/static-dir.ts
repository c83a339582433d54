import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, posix, sep } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import mime from 'mime-types';
import { httpErrors } from '../../sdk/index.ts';

export interface StaticDirOptions {
  /** URL prefix without the trailing slash (`/ui`). */
  prefix: string;
  /** The folder served. */
  root: string;
  /**
   * Answer `index.html` for a missing path without a file extension (a client-side route of a
   * single-page app). Missing files with an extension stay 404.
   */
  spa?: boolean;
}

/**
 * A folder of static files under a URL prefix (`router.ui_path` at `/ui/`, directory routes of
 * `router.routes`): a directory answers its `index.html`, ETag/Last-Modified revalidation (304),
 * HTML `no-cache` (a new UI build shows at once), other files cached an hour. Paths are kept
 * inside the folder, symlinks included.
 */
export function staticDirHandler(opts: StaticDirOptions) {
  const rootReal = realpath(opts.root);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const root = await rootReal;
    const rel = relativePath(request.url, opts.prefix);
    const file = rel === undefined ? undefined : await findFile(root, rel, !!opts.spa);
    if (!file) throw httpErrors.notFound('Not Found', ['Not Found'], 'STATIC_NOT_FOUND');
    const etag = `W/"${file.size.toString(16)}-${Math.floor(file.mtimeMs).toString(16)}"`;
    const lastModified = new Date(Math.floor(file.mtimeMs / 1000) * 1000).toUTCString();
    const html = extname(file.path) === '.html';
    reply.header('etag', etag).header('last-modified', lastModified)
      .header('cache-control', html ? 'no-cache' : 'public, max-age=3600');
    const since = request.headers['if-modified-since'];
    if (request.headers['if-none-match'] === etag || (!request.headers['if-none-match'] && since && Date.parse(since) >= Date.parse(lastModified))) {
      return reply.code(304).send();
    }
    reply.type(mime.contentType(extname(file.path)) || 'application/octet-stream').header('content-length', file.size);
    return reply.send(createReadStream(file.path));
  };
}

/** The decoded path below the prefix (`/` at least), or undefined when it cannot be decoded. */
function relativePath(url: string, prefix: string): string | undefined {
  const q = url.indexOf('?');
  const raw = (q < 0 ? url : url.slice(0, q)).slice(prefix.length);
  try {
    const decoded = decodeURIComponent(raw);
    // normalizing an absolute path drops every `..` above the root
    return decoded.includes('\0') ? undefined : posix.normalize(`/${decoded}`);
  } catch {
    return undefined;
  }
}

async function findFile(root: string, rel: string, spa: boolean): Promise<{ path: string; size: number; mtimeMs: number } | undefined> {
  const direct = await regularFile(root, rel);
  if (direct) return direct;
  const last = rel.slice(rel.lastIndexOf('/') + 1);
  return spa && !last.includes('.') ? regularFile(root, '/index.html') : undefined;
}

async function regularFile(root: string, rel: string): Promise<{ path: string; size: number; mtimeMs: number } | undefined> {
  try {
    let path = await realpath(join(root, rel));
    if (path !== root && !path.startsWith(root + sep)) return undefined;
    let st = await stat(path);
    if (st.isDirectory()) {
      path = await realpath(join(path, 'index.html'));
      if (!path.startsWith(root + sep)) return undefined;
      st = await stat(path);
    }
    return st.isFile() ? { path, size: st.size, mtimeMs: st.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}
