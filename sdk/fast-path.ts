import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Answers a request before the router, or returns false to let the app handle it. */
export type FastPathHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** The fast handlers of each HTTP server (one dispatcher per server, so two apps stay apart). */
const handlersByServer = new WeakMap<object, FastPathHandler[]>();

/**
 * Lets a plugin answer its hottest public requests straight from node's `request` event, before
 * fastify builds its request and reply objects, runs routing, hooks and per-request loggers:
 * memfs serves `GET /memfs/<playlist>` this way at the speed of a bare node:http server. A
 * handler must only take requests that no hook needs to see (public, no auth, no session
 * accounting), answer them completely, and return false for everything else, which then
 * reaches the app as usual. Returns a function that removes the handler.
 *
 * @example
 * const remove = addFastPath(ctx.http.server, (req, res) => {
 *   if (req.method !== 'GET' || req.url !== '/vendor/hot') return false;
 *   res.writeHead(200, ['content-type', 'text/plain', 'content-length', '2']);
 *   res.end('ok');
 *   return true;
 * });
 * ctx.onClose(remove);
 */
export function addFastPath(server: Server, handler: FastPathHandler): () => void {
  let handlers = handlersByServer.get(server);
  if (!handlers) {
    const list: FastPathHandler[] = [];
    handlers = list;
    handlersByServer.set(server, list);
    const app = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      for (let i = 0; i < list.length; i++) if (list[i]!(req, res)) return;
      for (const l of app) l.call(server, req, res);
    });
  }
  const list = handlers;
  list.push(handler);
  return () => {
    const i = list.indexOf(handler);
    if (i >= 0) list.splice(i, 1);
  };
}
