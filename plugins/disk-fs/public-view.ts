import { fsExtension, lookupFsNode, type FsFile, type FsNode } from '../../sdk/index.ts';
import type { DiskCache, CachedNode } from './cache.ts';
import type { DiskFilesystem } from './service.ts';

/*
 * What the public mount `/*` serves of the disk (the core's file door asks with `hint.door`): the
 * HLS playlist rewrite, the HTTP cache with its `X-Cache` and `Cache-Control` headers (reference
 * 11.5), `Cache-Control: private` on playlists. `/api/v3/fs/disk` reads the files as they are.
 */

/** Adds response headers to a node's file (a new object: cached nodes are shared). */
function withHeaders(node: FsNode | undefined, headers: string[]): FsNode | undefined {
  if (node?.kind !== 'file' || headers.length === 0) return node;
  return { ...node, file: { ...node.file, headers: [...(node.file.headers ?? []), ...headers] } };
}

/** A public read of `path` (cleaned), as the door serves it. */
export async function publicRead(fs: DiskFilesystem, cache: DiskCache | undefined, path: string, head: boolean): Promise<FsNode | undefined> {
  const node = cache ? await cached(cache, fs, path, head) : await loadFile(fs, path);
  if (node?.kind === 'file' && fsExtension(node.path) === '.m3u8') return withHeaders(node, ['cache-control', 'private']);
  return node;
}

/** The largest playlist read into memory to have its disk paths rewritten (a live one is a few KB). */
export const MAX_REWRITTEN_PLAYLIST = 4 * 1024 * 1024;

/**
 * A file, with playlists read and rewritten: ffmpeg writes absolute disk paths into them. They
 * become paths from the mount (`/hls/s0.ts`); the original strips the slash too, which breaks
 * every playlist that is not in the root folder.
 */
async function loadFile(fs: DiskFilesystem, path: string): Promise<FsNode | undefined> {
  const node = await lookupFsNode(fs, path);
  // a playlist past the bound is served as it is (streamed): 10 requests for a 37 MB one read it
  // whole each time (RSS +590 MB, the answers one after another)
  if (node?.kind !== 'file' || fsExtension(node.path) !== '.m3u8' || node.file.size > MAX_REWRITTEN_PLAYLIST) return node;
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
 * The cache in front of the disk. A hit is re-checked against the file's current version (one
 * stat), so a file ffmpeg rewrote directly on disk is never served stale.
 */
async function cached(cache: DiskCache, fs: DiskFilesystem, path: string, head: boolean): Promise<FsNode | undefined> {
  if (head) return withHeaders(await loadFile(fs, path), ['x-cache', 'SKIP ONLYGET']);
  if (!cache.allows(path)) return withHeaders(await loadFile(fs, path), ['x-cache', 'SKIP EXT']);
  const now = Date.now();
  const hit = cache.get(path, now);
  if (hit && await fs.version(hit.node.path) === hit.version) {
    const left = (hit.expires - now) / 1000;
    return withHeaders(hit.node, ['x-cache', `HIT ${left.toFixed(3)}`, 'cache-control', `max-age=${Math.round(left)}`]);
  }
  if (hit) cache.evictKey(path);
  const node = await loadFile(fs, path);
  if (node?.kind !== 'file') return node === undefined ? { kind: 'none', headers: ['x-cache', 'SKIP NOTOK'] } : node;
  if (!cache.fits(node.file.size)) return withHeaders(node, ['x-cache', 'SKIP TOOBIG']);
  const version = node.file.etag.replace(/-r"$/, '"');
  const m = await inMemory(node.path, node.file);
  cache.put(path, m, version, now);
  return withHeaders(m, ['x-cache', 'MISS', 'cache-control', `max-age=${Math.round(cache.ttlMs / 1000)}`]);
}
