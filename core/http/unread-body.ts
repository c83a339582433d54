import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpScope } from '../../sdk/index.ts';
import { DEFAULT_DRAIN, lingerClose, requestHasBody, type DrainBounds } from '../../sdk/linger-close.ts';

/**
 * Every answer sent while the request's body is still unread (a 401 from the authorize hook, a
 * 413 from the body limit, a 507 from a filesystem, any early refusal) is delivered, not reset:
 * the response says `Connection: close`, and instead of closing the socket at once (the kernel
 * then sends RST because unread bytes are pending, and the client loses the answer it has not
 * read yet) the server half-closes, keeps reading and discarding the rest of the body up to
 * `maxBytes` or `maxMs`, and only then closes. A client that waited for `100 Continue` sends
 * nothing and closes on the answer, so it is let go at once.
 */
export function drainUnreadBodies(app: HttpScope, bounds: DrainBounds = DEFAULT_DRAIN): void {
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
    const req = request.raw;
    const socket = req.socket as Socket | null;
    // an injected request (the test kit) has a stand-in socket: no connection to linger on
    if (!req.complete && requestHasBody(req) && socket && !socket.destroyed && typeof socket.destroy === 'function') {
      reply.header('connection', 'close');
      lingerClose(req, socket, bounds);
    }
    done(null, payload);
  });
}
