import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpScope } from '../../sdk/index.ts';

/** How much of a refused request's body is read and thrown away before the connection is cut. */
export interface DrainBounds {
  /** Bytes discarded at most (default 32 MiB). */
  maxBytes: number;
  /** Milliseconds the connection may linger after the answer (default 5 s). */
  maxMs: number;
}

export const DEFAULT_DRAIN: DrainBounds = { maxBytes: 32 * 1024 * 1024, maxMs: 5000 };

export const hasBody = (req: IncomingMessage) =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

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
    if (!req.complete && hasBody(req) && socket && !socket.destroyed && typeof socket.destroy === 'function') {
      reply.header('connection', 'close');
      lingerClose(req, socket, bounds);
    }
    done(null, payload);
  });
}

/**
 * Discards what is left of `req` and turns node's close after the answer into a lingering one
 * (also used by the serving threads for an answer main sent before the body ended).
 */
export function lingerClose(req: IncomingMessage, socket: Socket, bounds: DrainBounds): void {
  let seen = 0;
  let answered = false;
  const cut = () => socket.destroy();
  const timer = setTimeout(cut, bounds.maxMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  req.on('data', (c: Buffer) => {
    seen += c.length;
    if (seen > bounds.maxBytes) cut();
  });
  // a request closed by its client mid-body is an error for the stream; nothing is left to read
  req.on('error', () => {});
  req.on('end', () => {
    // the whole body is read: nothing unread remains, a plain close cannot reset the answer
    if (answered) socket.end(() => socket.destroy());
  });
  req.resume();
  // node calls destroySoon after the last response of a `Connection: close` socket; destroying
  // right after the write would reset a client that is still sending
  socket.destroySoon = function lingeringDestroySoon(this: Socket) {
    answered = true;
    if (req.complete) {
      this.end(() => this.destroy());
      return;
    }
    this.end();
  };
}
