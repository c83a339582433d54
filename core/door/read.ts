import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FsServeRequest } from '../../sdk/fs-hooks.ts';
import { fsServeTapped, markFileDoorMiss, responseBytes } from './serve-hooks.ts';
import type { FsFile, FsNode } from '../../sdk/fs.ts';
import { isApiError } from '../../sdk/errors.ts';
import { refusal, sendThrown } from './answer-error.ts';
import { sendFile } from './send.ts';
import type { DoorAsk, DoorEnv, DoorMount, Maybe } from './types.ts';

/*
 * The read answer of the door: GET and HEAD of a mount's file, the same on main and in every
 * serving thread. The lookup comes first (a thread passes a miss to main before any hook ran, so
 * no hook sees a request twice), then `preServe`, `transformPlaylist`, the file, `onServed`.
 */

const isPromise = <T>(v: Maybe<T>): v is Promise<T> => typeof (v as { then?: unknown } | undefined)?.then === 'function';

/** Per rewritten body (one per viewer and version, kept by PlaylistRewrites), its file facts. */
const rewrittenFiles = new WeakMap<Buffer, FsFile>();

/** No extra headers (shared, never changed: a list that grows is a copy). */
const NONE: readonly string[] = Object.freeze([]);

/** The CORS headers of an answer (`Vary` comes with the file's own headers). */
export function corsHead(env: DoorEnv, req: IncomingMessage): string[] {
  const origin = req.headers.origin;
  const allowed = origin === undefined ? undefined : env.cors.allow(origin);
  return allowed === undefined ? [] : ['access-control-allow-origin', allowed, 'access-control-allow-credentials', 'true', 'access-control-expose-headers', 'Content-Length'];
}

/** What a GET of `path` serves: the file, a link, or for a folder its default file. */
function lookup(m: DoorMount, path: string, head: boolean, ask: DoorAsk | undefined): Maybe<FsNode | undefined> {
  const first = m.open(path, head, ask);
  return isPromise(first) ? first.then((n) => folderIndex(m, path, head, n)) : folderIndex(m, path, head, first);
}

/** A folder's default file, or nothing; anything else as it is. */
function folderIndex(m: DoorMount, path: string, head: boolean, n: FsNode | undefined): Maybe<FsNode | undefined> {
  if (n?.kind !== 'dir') return n;
  if (!m.defaultFile) return undefined;
  const index = m.open(`${path === '/' ? '' : path}/${m.defaultFile}`, head);
  const noDir = (x: FsNode | undefined) => (x?.kind === 'dir' ? undefined : x);
  return isPromise(index) ? index.then(noDir) : noDir(index);
}

/**
 * A lookup refused (a link out of the root: 403; a view's 400) or failed: main sends its status; a
 * thread sends an ApiError (only a mount's view throws one there) and leaves anything else to main.
 */
function failed(env: DoorEnv, req: IncomingMessage, res: ServerResponse, path: string, err: unknown): boolean {
  if (env.where === 'thread' && !isApiError(err)) return false;
  if (!isApiError(err)) env.onError?.(err, path);
  sendThrown(res, err, ['vary', 'Origin', ...corsHead(env, req)]);
  return true;
}

/**
 * Answers a GET/HEAD of `path` below mount `m`: true when answered, false when this copy leaves it
 * to another (a thread: to main; main: to the router). A promise when the lookup needs I/O.
 */
export function answerRead(env: DoorEnv, m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string, query: string): Maybe<boolean> {
  let found: Maybe<FsNode | undefined>;
  try {
    // only a mount that serves a view by request gets the query and the client (no object per read else)
    const ask = m.asks ? { query, remote: env.clientOf(req) } : undefined;
    found = lookup(m, path, req.method === 'HEAD', ask);
  } catch (err) {
    return failed(env, req, res, path, err);
  }
  if (isPromise(found)) return found.then((n) => answerNode(env, m, req, res, path, query, n), (err: unknown) => failed(env, req, res, path, err));
  return answerNode(env, m, req, res, path, query, found);
}

function answerNode(env: DoorEnv, m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string, query: string, node: FsNode | undefined): boolean {
  if (res.destroyed) {
    if (node?.kind === 'file') node.file.release?.();
    return true;
  }
  if (node === undefined || node.kind === 'dir' || node.kind === 'none') return miss(env, m, req, res, path, node?.kind === 'none' ? node.headers : []);
  if (node.kind === 'link') {
    if (env.where === 'thread') return false;
    // the original sends the bare target without its slash, which breaks for links in folders
    const location = encodeURI(m.prefix + node.target);
    res.writeHead(301, ['vary', 'Origin', ...corsHead(env, req), 'location', location, 'content-type', 'text/plain; charset=utf-8', 'content-length', String(Buffer.byteLength(location))]);
    res.end(location);
    return true;
  }
  // main's in-process taps that a thread cannot run: it leaves the read to main
  if (env.mainReads?.()) {
    node.file.release?.();
    return false;
  }
  const hooks = env.hooks;
  const tapped = fsServeTapped(hooks);
  const remote = tapped ? env.clientOf(req) : '';
  if (remote === undefined) {
    node.file.release?.();
    return false;
  }
  let extra: readonly string[] = req.headers.origin === undefined ? NONE : corsHead(env, req);
  const type = node.file.mime ?? m.mime.lookup(node.path) ?? m.defaultType;
  if (node.file.headers) extra = [...extra, ...node.file.headers];
  if (!tapped) {
    sendFile(req, res, node.file, type, extra);
    return true;
  }
  // `note` from the start: a tap that sets it does not change the object's shape on every request
  const sreq: FsServeRequest = { mount: m.prefix === '' ? '/' : m.prefix, path, query, remote, headers: req.headers, method: req.method === 'HEAD' ? 'HEAD' : 'GET', note: undefined };
  const refused = hooks.preServe.isUsed() ? hooks.preServe.call(sreq) : undefined;
  if (refused) {
    node.file.release?.();
    const retry = refused.retryAfter === undefined ? [] : ['retry-after', String(Math.max(0, Math.ceil(refused.retryAfter)))];
    const more = refused.headers === undefined ? [] : Object.entries(refused.headers).flat();
    refusal(res, refused.status, refused.message, refused.details, ['vary', 'Origin', ...extra, ...retry, ...more]);
    served(env, res, sreq, 0);
    return true;
  }
  let file = node.file;
  if (file.data) {
    const data = env.rewrites.apply(hooks, sreq, node.path, file.data);
    if (data) {
      let own = rewrittenFiles.get(data);
      if (!own) {
        // the rewritten body is this viewer's own: a validator of its content keeps 304s truthful
        const etag = `"${file.etag.slice(1, -1)}-${fnv1a(data)}"`;
        own = { ...file, data, size: data.length, etag, gzip: undefined };
        rewrittenFiles.set(data, own);
      }
      file = own;
      extra = privateCache(extra);
    }
  }
  const body = sendFile(req, res, file, type, extra);
  served(env, res, sreq, body);
  return true;
}

/** The headers with the answer made `private` (a viewer's own body): joined to the file's own `cache-control` if it has one, never a second header. */
export function privateCache(extra: readonly string[]): string[] {
  const out = [...extra];
  for (let i = 0; i < out.length; i += 2) {
    if (out[i]!.toLowerCase() !== 'cache-control') continue;
    out[i + 1] = `private, ${out[i + 1]!.replace(/\bpublic\b,?\s*/i, '')}`.replace(/,\s*$/, '');
    return out;
  }
  return [...out, 'cache-control', 'private'];
}

function served(env: DoorEnv, res: ServerResponse, sreq: FsServeRequest, body: number): void {
  if (env.hooks.onServed.isUsed()) env.hooks.onServed.call({ request: sreq, status: res.statusCode, bytes: responseBytes(res, body) });
}

/** Nothing at `path`: a thread asks main, main answers 404 (or lets a cluster node try). */
function miss(env: DoorEnv, m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string, headers: readonly string[]): boolean {
  if (env.where === 'thread') return false;
  if (env.missToRouter?.()) {
    markFileDoorMiss(req, { mount: m.prefix === '' ? '/' : m.prefix, path });
    return false;
  }
  refusal(res, 404, 'File not found', [path], ['vary', 'Origin', ...corsHead(env, req), ...headers]);
  return true;
}

/** FNV-1a of a body, 8 hex digits: cheap, and enough to tell one viewer's rewrite of a version from another. */
export function fnv1a(data: Buffer): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i++) h = Math.imul(h ^ data[i]!, 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}
