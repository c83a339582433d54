import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import type { FilesystemService, FsNode, FsOpenHint } from './fs.ts';
import type { HttpScope } from './http.ts';

/**
 * HTTP building blocks for routes that serve filesystems inside the API (`/api/v3/fs`, a vendor's
 * own routes): lookups with the folder's default file, links as 301, raw uploads. Public mounts
 * are served by the core's file door from a filesystem's `publicMount`, not by routes.
 */

type Maybe<T> = T | Promise<T>;
const isPromise = <T>(v: Maybe<T>): v is Promise<T> => typeof (v as { then?: unknown } | undefined)?.then === 'function';

/**
 * The Error of a missing file: 404 `File not found` with the path.
 *
 * @example
 * if (!(await fs.stat(path))) throw fsNotFound(path);
 */
export const fsNotFound = (path: string) => new ApiError(404, 'File not found', [path], 'FS_NOT_FOUND');

async function statOpen(fs: FilesystemService, path: string): Promise<FsNode | undefined> {
  const info = await fs.stat(path);
  const data = info && await fs.readFile(path);
  if (!info || !data) return undefined;
  const etag = `"${data.length.toString(16)}-${info.last_modified.toString(16)}"`;
  return { kind: 'file', path, file: { size: data.length, mtimeMs: info.last_modified * 1000, etag, data } };
}

/**
 * What `path` names in `fs`: its `open` (with `hint`), or for a filesystem without one `stat` and
 * `readFile` (a file read whole, its ETag from size and date).
 *
 * @example
 * const node = await openFsNode(fs, '/live/x.m3u8', { head: true });
 */
export function openFsNode(fs: FilesystemService, path: string, hint?: FsOpenHint): Maybe<FsNode | undefined> {
  return fs.open ? fs.open(path, hint) : statOpen(fs, path);
}

const openNode = (fs: FilesystemService, path: string) => openFsNode(fs, path);

/**
 * What a GET of `path` serves: the file, a link, or for a folder its default file (disk:
 * `index.html`); undefined when there is nothing. Synchronous when the filesystem is.
 *
 * @example
 * const node = await lookupFsNode(disk, '/site'); // { kind: 'file', path: '/site/index.html', ... }
 */
export function lookupFsNode(fs: FilesystemService, path: string): Maybe<FsNode | undefined> {
  const finish = (n: FsNode | undefined): Maybe<FsNode | undefined> => {
    if (n?.kind !== 'dir') return n;
    if (!fs.defaultFile) return undefined;
    const index = openNode(fs, `${path === '/' ? '' : path}/${fs.defaultFile}`);
    const noDir = (m: FsNode | undefined) => (m?.kind === 'dir' ? undefined : m);
    return isPromise(index) ? index.then(noDir) : noDir(index);
  };
  const first = openNode(fs, path);
  return isPromise(first) ? first.then(finish) : finish(first);
}

/**
 * Lets a scope take any request body raw (a stream, whatever its Content-Type): uploads are
 * bounded by the filesystem's capacity, not the API's JSON limit. Call on a scope that holds
 * only filesystem routes, and give upload routes `onRequest: ignoreContentType`.
 *
 * @example
 * ctx.http.register(async (s) => { acceptRawBodies(s); s.put('/vendor/*', { onRequest: ignoreContentType }, handler); });
 */
export function acceptRawBodies(scope: HttpScope): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_req, payload, done) => {
    markStreamedBody(payload);
    done(null, payload);
  });
}

const STREAMED_BODY = Symbol.for('media-core.streamed-body');

/**
 * Marks a request whose body the route reads as a stream (an upload, a live ingest) rather than
 * whole: the core's body timeout (`http.body_timeout_seconds`) then cuts it only when no byte
 * arrives for that long, not when it takes longer. `acceptRawBodies` marks every body it passes
 * on; a route that streams a body another way calls this before it reads.
 *
 * @example
 * markStreamedBody(request.raw);
 * for await (const chunk of request.raw) hub.push(chunk);
 */
export function markStreamedBody(req: object): void {
  (req as Record<symbol, boolean>)[STREAMED_BODY] = true;
}

/**
 * Whether `markStreamedBody` marked this request (by any copy of the SDK).
 *
 * @example
 * const idleOnly = isStreamedBody(request.raw);
 */
export function isStreamedBody(req: object): boolean {
  return (req as Record<symbol, boolean | undefined>)[STREAMED_BODY] === true;
}

/**
 * Route `onRequest` hook for uploads: a file's type comes from its name, so an odd or malformed
 * Content-Type must not refuse the upload (fastify would answer 415 before any parser runs).
 *
 * @example
 * s.put('/vendor/*', { onRequest: ignoreContentType }, handler);
 */
export function ignoreContentType(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  delete request.headers['content-type'];
  done();
}

const DEFERRED = Symbol.for('core.fs.continue-deferred');

/**
 * Sends `100 Continue` (once) before a route reads a request body, when the core deferred it for
 * the route's prefix (the API's uploads: a refused one is answered before its body is sent).
 *
 * @example
 * continueUpload(request.raw, reply.raw);
 * for await (const chunk of request.raw) { ... }
 */
export function continueUpload(req: IncomingMessage, res: ServerResponse): void {
  const m = req as IncomingMessage & { [DEFERRED]?: boolean };
  if (m[DEFERRED]) {
    m[DEFERRED] = false;
    res.writeContinue();
  }
}
