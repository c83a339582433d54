import type { IncomingMessage, Server, ServerResponse } from 'node:http';

const DEFERRED = Symbol.for('core.fs.continue-deferred');
type Marked = IncomingMessage & { [DEFERRED]?: boolean };

/** Upload prefixes per HTTP server (one listener per server, so two apps stay apart). */
const prefixesByServer = new WeakMap<object, string[]>();

/**
 * Answers `Expect: 100-continue` for uploads below `prefix` only when the handler starts reading
 * the body, so a refused upload (401 basic auth, 507) is answered before the client sends it.
 * ffmpeg depends on it: its first PUT carries no credentials and expects the 401 challenge instead
 * of `100 Continue`; only then does it retry with them. Other paths keep node's default.
 *
 * @example
 * deferContinue(ctx.http.server, '/memfs/');
 */
export function deferContinue(server: Server, prefix: string): void {
  let prefixes = prefixesByServer.get(server);
  if (!prefixes) {
    const list: string[] = [];
    prefixes = list;
    prefixesByServer.set(server, list);
    server.on('checkContinue', (req: Marked, res: ServerResponse) => {
      if (list.some((p) => req.url?.startsWith(p))) req[DEFERRED] = true;
      else res.writeContinue();
      server.emit('request', req, res);
    });
  }
  if (!prefixes.includes(prefix)) prefixes.push(prefix);
}

/**
 * Sends a deferred `100 Continue` (once) before a handler reads the request body.
 *
 * @example
 * continueUpload(request.raw, reply.raw);
 * for await (const chunk of request.raw) { ... }
 */
export function continueUpload(req: IncomingMessage, res: ServerResponse): void {
  const m = req as Marked;
  if (m[DEFERRED]) {
    m[DEFERRED] = false;
    res.writeContinue();
  }
}
