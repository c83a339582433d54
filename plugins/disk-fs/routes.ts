import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ApiError, CorsPolicy, PUBLIC, fsExtension, lookupFsNode, registerFsMount,
  type AuthorizeInput, type FsServeHooks, type FsFile, type FsNode, type HttpScope, type MimeTable,
} from '../../sdk/index.ts';
import type { DiskCache, CachedNode } from './cache.ts';
import type { DiskFilesystem } from './service.ts';

export interface DiskRoutesOptions {
  fs: DiskFilesystem;
  mime: MimeTable;
  corsOrigins: readonly string[];
  cache: DiskCache | undefined;
  /** The kernel's authorize hook: unknown `/api/...` paths get the API's checks, then 404. */
  authorize(input: AuthorizeInput): Promise<ApiError | undefined>;
  /** The file-serving hooks (session accounting of HLS viewers). */
  serveHooks: FsServeHooks;
}

const isApi = (path: string) => path === '/api' || path.startsWith('/api/');

/**
 * The public read-only mount `/*` (the core serves `/api/v3/fs/disk` from the registry) with its cache, the HLS
 * playlist rewrite, and CORS preflights for every path (`/api` with origin `*`, as the reference
 * does). The catch-all leaves `/api/...` to the API: such paths are checked like any API route
 * and then get the kernel's 404.
 */
export function diskRoutes(http: HttpScope, o: DiskRoutesOptions): void {
  const cors = new CorsPolicy(o.corsOrigins);
  const apiCors = new CorsPolicy(['*']);
  const load = (path: string) => loadFile(o.fs, path);
  registerFsMount(http, o.fs, {
    mime: o.mime,
    defaultType: 'text/html',
    cors,
    preflight: false,
    hooks: o.serveHooks,
    async lookup(path, request, reply) {
      if (isApi(path)) {
        const denied = await o.authorize({ request, access: 'protected', mutating: false, api: true });
        throw denied ?? new ApiError(404, 'Not Found', ['Not Found'], 'ROUTE_NOT_FOUND');
      }
      const node = o.cache ? await cached(o.cache, o.fs, path, request, reply, load) : await load(path);
      if (node?.kind === 'file' && fsExtension(node.path) === '.m3u8') reply.header('cache-control', 'private');
      return node;
    },
  });
  http.options('/*', { config: PUBLIC, schema: { hide: true } }, (request, reply) => {
    const path = request.url.split('?')[0]!;
    return (isApi(path) ? apiCors : cors).preflight(request, reply);
  });
}

/**
 * A file, with playlists read and rewritten: ffmpeg writes absolute disk paths into them. They
 * become paths from the mount (`/hls/s0.ts`); the original strips the slash too, which breaks
 * every playlist that is not in the root folder.
 */
async function loadFile(fs: DiskFilesystem, path: string): Promise<FsNode | undefined> {
  const node = await lookupFsNode(fs, path);
  if (node?.kind !== 'file' || fsExtension(node.path) !== '.m3u8') return node;
  const m = await inMemory(node.path, node.file);
  const prefix = `${fs.root}/`;
  const text = m.file.data!.toString('utf8');
  if (!text.includes(prefix)) return m;
  const out = text.split('\n').map((l) => (l.startsWith(prefix) ? l.slice(prefix.length - 1) : l)).join('\n');
  const data = Buffer.from(out, 'utf8');
  return { kind: 'file', path: node.path, file: { ...m.file, data, size: data.length, etag: `${m.file.etag.slice(0, -1)}-r"` } };
}

/** The file's content read into memory (for the cache and the playlist rewrite). */
async function inMemory(path: string, f: FsFile): Promise<CachedNode> {
  let data = f.data;
  if (!data) {
    if (f.size === 0) {
      f.release?.();
      data = Buffer.alloc(0);
    } else {
      const chunks: Buffer[] = [];
      for await (const c of f.stream!(0, f.size - 1)) chunks.push(c as Buffer);
      data = Buffer.concat(chunks);
    }
  }
  return { kind: 'file', path, file: { size: data.length, mtimeMs: f.mtimeMs, etag: f.etag, data } };
}

/**
 * The cache in front of the disk (reference 11.5, `X-Cache` and `Cache-Control` as there).
 * A hit is re-checked against the file's current version (one stat), so a file ffmpeg rewrote
 * directly on disk is never served stale.
 */
async function cached(
  cache: DiskCache, fs: DiskFilesystem, path: string, request: FastifyRequest, reply: FastifyReply,
  load: (path: string) => Promise<FsNode | undefined>,
): Promise<FsNode | undefined> {
  if (request.method !== 'GET') {
    reply.header('x-cache', 'SKIP ONLYGET');
    return load(path);
  }
  if (!cache.allows(path)) {
    reply.header('x-cache', 'SKIP EXT');
    return load(path);
  }
  const now = Date.now();
  const hit = cache.get(path, now);
  if (hit && await fs.version(hit.node.path) === hit.version) {
    const left = (hit.expires - now) / 1000;
    reply.header('x-cache', `HIT ${left.toFixed(3)}`).header('cache-control', `max-age=${Math.round(left)}`);
    return hit.node;
  }
  if (hit) cache.evictKey(path);
  const node = await load(path);
  if (node?.kind !== 'file') {
    reply.header('x-cache', 'SKIP NOTOK');
    return node;
  }
  if (!cache.fits(node.file.size)) {
    reply.header('x-cache', 'SKIP TOOBIG');
    return node;
  }
  const version = node.file.etag.replace(/-r"$/, '"');
  const m = await inMemory(node.path, node.file);
  cache.put(path, m, version, now);
  reply.header('x-cache', 'MISS').header('cache-control', `max-age=${Math.round(cache.ttlMs / 1000)}`);
  return m;
}
