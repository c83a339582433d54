import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { extname, join, posix } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type MimeTypes from 'mime-types';
import { httpErrors } from '../../sdk/index.ts';
import { descriptorPath, isBelow, pinnedPath } from '../../sdk/fd-path.ts';

/** mime-types (its table of about 2,500 types is built as it loads: about 9 ms) comes with the first file served (issue 46.4). */
let mimeTypes: typeof MimeTypes | undefined;
const mime = () => (mimeTypes ??= createRequire(import.meta.url)('mime-types') as typeof MimeTypes);

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
 * inside the folder, symlinks included: what is served is checked on the descriptor opened (a
 * folder swapped for a link meanwhile cannot lead elsewhere).
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
      await file.fh.close().catch(() => {});
      return reply.code(304).send();
    }
    reply.type(mime().contentType(extname(file.path)) || 'application/octet-stream').header('content-length', file.size);
    return reply.send(file.fh.createReadStream({ autoClose: true }));
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

interface Found { fh: FileHandle; path: string; size: number; mtimeMs: number }

async function findFile(root: string, rel: string, spa: boolean): Promise<Found | undefined> {
  const direct = await regularFile(root, rel);
  if (direct) return direct;
  const last = rel.slice(rel.lastIndexOf('/') + 1);
  return spa && !last.includes('.') ? regularFile(root, '/index.html') : undefined;
}

// links followed, checked on the descriptor; a FIFO never blocks the open
const READ = constants.O_RDONLY | constants.O_NONBLOCK;

/** The open descriptor of `path` when it is inside `root`, with its real path; else undefined. */
async function openBelow(root: string, path: string): Promise<{ fh: FileHandle; real: string } | undefined> {
  const fh = await open(path, READ).catch(() => undefined);
  if (!fh) return undefined;
  const real = descriptorPath(fh.fd);
  if (real !== undefined && isBelow(root, real)) return { fh, real };
  await fh.close().catch(() => {});
  return undefined;
}

/** The file at `rel` (a folder: its index.html), open, when it is a regular file inside the root. */
async function regularFile(root: string, rel: string): Promise<Found | undefined> {
  let o = await openBelow(root, join(root, rel));
  try {
    let st = o && await o.fh.stat();
    if (o && st?.isDirectory()) {
      // the index of the very folder opened
      const dir = o.fh;
      o = await openBelow(root, pinnedPath(dir.fd, 'index.html')).finally(() => dir.close().catch(() => {}));
      st = o && await o.fh.stat();
    }
    if (o && st?.isFile()) return { fh: o.fh, path: o.real, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    // gone meanwhile
  }
  await o?.fh.close().catch(() => {});
  return undefined;
}
