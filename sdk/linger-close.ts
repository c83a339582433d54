import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How much of a refused request's body is read and thrown away before the connection is cut.
 *
 * @example
 * const bounds: DrainBounds = { maxBytes: 1024 * 1024, maxMs: 2000 };
 */
export interface DrainBounds {
  /** Bytes discarded at most (default 32 MiB). */
  maxBytes: number;
  /** Milliseconds the connection may linger after the answer (default 5 s). */
  maxMs: number;
}

/**
 * The bounds the core drains refused bodies with: 32 MiB, 5 s.
 *
 * @example
 * lingerClose(req, req.socket, DEFAULT_DRAIN);
 */
export const DEFAULT_DRAIN: DrainBounds = { maxBytes: 32 * 1024 * 1024, maxMs: 5000 };

/**
 * True when the request announces a body (chunked, or a length above 0).
 *
 * @example
 * if (!req.complete && requestHasBody(req)) lingerClose(req, req.socket, DEFAULT_DRAIN);
 */
export const requestHasBody = (req: { headers: IncomingHttpHeaders }): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/**
 * An answer sent while the request's body is still unread is delivered, not reset: instead of
 * closing the socket at once after the answer (the kernel then sends RST because unread bytes
 * are pending, and the client loses the answer it has not read yet) the server half-closes,
 * keeps reading and discarding the rest of the body up to `maxBytes` or `maxMs`, and only then
 * closes. Call it when answering early, with `Connection: close` on the answer (node then calls
 * the socket's `destroySoon`, which this turns into a lingering close).
 *
 * @example
 * res.setHeader('connection', 'close');
 * lingerClose(req, req.socket, DEFAULT_DRAIN);
 * res.writeHead(413).end();
 */
export function lingerClose(req: IncomingMessage, socket: Socket, bounds: DrainBounds): void {
  // an injected request (light-my-request: the test kit) has a stand-in socket, no connection to linger on
  if (typeof socket.destroy !== 'function') return;
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
