import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, isApiError } from '../../sdk/errors.ts';
import { DEFAULT_DRAIN, requestHasBody as hasBody, lingerClose } from '../../sdk/linger-close.ts';
import { sendThrown } from './answer-error.ts';
import { corsHead } from './read.ts';
import type { DoorEnv, DoorMount } from './types.ts';

/*
 * The upload taker of the door: PUT/POST (201 for a new file, 204 for a replaced one) and DELETE
 * of a mount with public writes, behind its Basic credentials when it has them. `Expect:
 * 100-continue` is answered only once the credentials passed, so a refused upload (401, 413,
 * 507) is answered before the client sends its body (ffmpeg's first PUT carries no credentials
 * and waits for the 401 challenge). A refusal before the body ended closes the connection after
 * the answer, with the rest of the body read and dropped (bounded), so the answer is not reset.
 */

const TEXT = 'text/plain; charset=utf-8';

/** Answers a write of `path` below `m` (the body is the door's from here on). */
export async function answerWrite(env: DoorEnv, m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string, remote: string): Promise<void> {
  const head = ['vary', 'Origin', ...corsHead(env, req)];
  try {
    // a thread took only the exact credential; main checks it again with its backoff when it stores
    if (m.writes?.basic && env.where === 'main') await env.authorize(m, remote, req.headers.authorization, path, req.method);
    if (req.method === 'DELETE') {
      if (!(await env.store.delete(m, path))) throw new ApiError(404, 'File not found', [path], 'FS_NOT_FOUND');
      const text = `Deleted: ${path}`;
      res.writeHead(200, [...head, 'content-type', TEXT, 'content-length', String(Buffer.byteLength(text))]);
      res.end(text);
      return;
    }
    if (path === '/') throw new ApiError(400, 'Bad Request', ['path must name a file'], 'FS_BAD_PATH');
    // a body in a transfer coding besides chunked (gzip, chunked) would be stored still encoded (RFC 9112 6.1: 501)
    const te = req.headers['transfer-encoding'];
    if (te !== undefined && te.trim().toLowerCase() !== 'chunked') {
      throw new ApiError(501, 'Not Implemented', [`transfer coding '${te.slice(0, 64)}' is not supported: send the body as is or chunked`], 'FS_TRANSFER_CODING');
    }
    goOn(req, res);
    const r = await env.store.write(m, path, req, remote);
    head.push('content-location', req.url!);
    if (r.created) head.push('content-type', TEXT, 'content-length', '0');
    res.writeHead(r.created ? 201 : 204, head);
    res.end();
  } catch (err) {
    refuse(req, res, isApiError(err) ? err : new ApiError(400, 'Bad Request', [(err as Error).message], 'FS_WRITE'), head);
  }
}

/** A client waiting for `100 Continue` may send its body now. */
export function goOn(req: IncomingMessage, res: ServerResponse): void {
  const m = req as IncomingMessage & { [CONTINUE]?: boolean };
  if (m[CONTINUE] === true) {
    m[CONTINUE] = false;
    res.writeContinue();
  }
}

const CONTINUE = Symbol.for('core.files.continue');

/** Marks a request whose client waits for `100 Continue` (the listener's `checkContinue`). */
export function waitsForContinue(req: IncomingMessage): void {
  (req as IncomingMessage & { [CONTINUE]?: boolean })[CONTINUE] = true;
}

/**
 * Sends a refusal. A refused upload's connection closes after the answer, whether its body was
 * read (a thread receives it whole before main decides) or not (then the rest is drained first, so
 * the answer is not reset; a client that waited for `100 Continue` sends none).
 */
function refuse(req: IncomingMessage, res: ServerResponse, err: ApiError, head: readonly string[]): void {
  const socket = req.socket as Socket | null;
  if (!hasBody(req) || !socket || socket.destroyed) {
    sendThrown(res, err, head);
    return;
  }
  sendThrown(res, err, [...head, 'connection', 'close']);
  if (!req.complete) lingerClose(req, socket, DEFAULT_DRAIN);
}
