import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Node's `listening` listener that (re)starts its header-timeout check (node:_http_server). */
const SETUP = 'setupConnectionsTracking';
/** Where node keeps that check's interval on the server. */
const INTERVAL = 'http.server.connectionsCheckingInterval';

/** Node's interval of that check on `server` (undefined before it listened, or on another runtime). */
function intervalOf(server: Server): (NodeJS.Timeout & { _destroyed?: boolean }) | undefined {
  const key = Object.getOwnPropertySymbols(server).find((s) => s.description === INTERVAL);
  return key ? (server as unknown as Record<symbol, NodeJS.Timeout | undefined>)[key] : undefined;
}

/**
 * Node checks every listener's connections for `headersTimeout` every
 * `connectionsCheckingInterval` (1 s here), also while the listener has no connection: on an idle
 * service that check was main's only wake-up a second (issue 46.2). This runs node's check only
 * while the listener holds a connection: it stops when the last one closes and starts again (with
 * node's own setup) at the next, so a connection is checked from its first second as before.
 * The connections counted are every one node hands to the listener (a serving thread's hop to
 * main too). On a runtime without node's setup function under that name nothing changes (the
 * check keeps running); answers `false` then.
 */
export function checkHeadersWhileConnected(server: Server): boolean {
  const setup = server.listeners('listening').find((f) => f.name === SETUP) as ((this: Server) => void) | undefined;
  if (!setup) return false;
  let open = 0;
  const stop = (): void => clearInterval(intervalOf(server));
  // after node's own listener (added when the server was made): nothing to check yet
  server.on('listening', () => {
    if (open === 0) stop();
  });
  server.on('connection', (socket: Socket) => {
    // a socket closed already (a hop that ended on the way) has had its 'close'
    if (socket.closed) return;
    if (open++ === 0 && server.listening) setup.call(server);
    socket.once('close', () => {
      if (--open === 0) stop();
    });
  });
  return true;
}

/** Whether node's header check of `server` is armed now (for tests and benches). */
export function headerCheckArmed(server: Server): boolean {
  const t = intervalOf(server);
  return t !== undefined && t._destroyed !== true;
}
