import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { fileDoorMiss, type FilesystemService, type FsNode } from '../../sdk/index.ts';
import type { HttpProxy, Upstream } from './proxy-http.ts';

/** How long one node may take to answer a HEAD probe for a file. */
const PROBE_MS = 1000;

/** What the locator needs of the cluster for one request. */
export interface FileContext {
  /** The other live nodes, in a stable order (asked only after a local miss). */
  peers(): Upstream[];
  /** Processes owned by other live nodes: id → that node. */
  owners(): Map<string, Upstream>;
  /** The cluster headers (hop, signed client) for a probe of `url` at `to`. */
  headers(to: Upstream, url: string): OutgoingHttpHeaders;
}

/**
 * Which node has a file this node does not: the owner of the process whose id the path names
 * (ffmpeg writes `{processid}.m3u8`, `{processid}_001.ts`, ...), else the first other live node
 * that answers a HEAD probe with 200. Only files of a public mount the core's file door did not
 * find here are considered (`fileDoorMiss`: the door served every local hit before the router);
 * the local check is looked at again (an upload may have ended meanwhile).
 */
export class FileLocator {
  #filesystems: () => readonly FilesystemService[];
  #http: HttpProxy;

  constructor(filesystems: () => readonly FilesystemService[], http: HttpProxy) {
    this.#filesystems = filesystems;
    this.#http = http;
  }

  async holder(request: FastifyRequest, ctx: FileContext): Promise<Upstream | undefined> {
    // only a file of a public mount the core's door did not find here
    const miss = fileDoorMiss(request.raw);
    const fs = miss && this.#filesystems().find((f) => f.mount === miss.mount);
    if (!miss || !fs) return undefined;
    const path = miss.path;
    // folders (a disk's index file) stay local: they are no process's output
    if (path.endsWith('/') || await hasLocally(fs, path)) return undefined;
    const peers = ctx.peers();
    if (peers.length === 0) return undefined;
    const owners = ctx.owners();
    let best: [string, Upstream] | undefined;
    for (const [id, up] of owners) {
      if ((!best || id.length > best[0].length) && namesProcess(path, id)) best = [id, up];
    }
    if (best) return best[1];
    const auth = request.headers.authorization;
    for (const peer of peers) {
      const status = await this.#http.probe(peer, 'HEAD', request.url, { ...ctx.headers(peer, request.url), ...(auth ? { authorization: auth } : {}) }, PROBE_MS);
      if (status === 200) return peer;
    }
    return undefined;
  }
}

/**
 * True when a file name or folder of `path` starts with `id` followed by `.`, `_`, `-`, `/` or the
 * end: `/p1.m3u8`, `/p1_003.ts`, `/p1/index.m3u8` name `p1`; `/xp1.ts` does not. The longest id
 * that matches wins (`p1` and `p1_hd` both match `/p1_hd.m3u8`).
 */
export function namesProcess(path: string, id: string): boolean {
  for (let i = path.indexOf(`/${id}`); i >= 0; i = path.indexOf(`/${id}`, i + 1)) {
    const next = path[i + 1 + id.length];
    if (next === undefined || next === '.' || next === '_' || next === '-' || next === '/') return true;
  }
  return false;
}

/** True when `fs` has something at `path`; a file opened only to look is released at once. */
async function hasLocally(fs: FilesystemService, path: string): Promise<boolean> {
  if (!fs.open) return (await fs.stat(path)) !== undefined;
  const r = fs.open(path);
  const node: FsNode | undefined = r instanceof Promise ? await r.catch(() => undefined) : r;
  if (node?.kind === 'file') node.file.release?.();
  return node !== undefined;
}
