import type { IncomingMessage, ServerResponse } from 'node:http';
import { http } from '../../runtime/builtin.ts';
import type { Duplex } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { Forwarder } from './forward.ts';
import { ThreadTlsListener } from './thread-tls.ts';
import { ThreadTrafficMeter } from './traffic.ts';
import type { DoorStart, ToWorker, WorkerInit } from './messages.ts';
import { ConnectionCap, answerClientError, applyServerBounds, serverOptions } from '../../http/listener-bounds.ts';
import { checkHeadersWhileConnected } from '../../http/header-check.ts';
import { BodyDeadlines } from '../../http/body-deadlines.ts';
import { startQuietCollector } from '../../runtime/quiet-gc.ts';
import { threadDoor, type ThreadDoor } from '../thread-door.ts';

/*
 * A serving thread: its own listener on the API port (reusePort) and, with TLS on, on the HTTPS
 * port (thread-tls.ts), the current app's file door (over state main broadcasts), and everything
 * else forwarded to main.
 */

const init = workerData as WorkerInit;
const parent = parentPort!;
const forwarder = new Forwarder(Buffer.from(init.key), init.forwardPort);
let door: ThreadDoor | undefined;
const stats = { served: 0, forwarded: 0 };

/** Serves with the door of the app that listens now, or with none (every request goes to main). */
function setDoor(d: DoorStart | undefined): void {
  door?.close();
  door = d && threadDoor(d);
}

/** Offers the request to the door, else forwards it. */
function dispatch(req: IncomingMessage, res: ServerResponse, expect = false): void {
  const taken = door?.handle(req, res) ?? false;
  if (taken === true) {
    stats.served++;
    return;
  }
  if (taken !== false) {
    // the door needed I/O to decide (disk)
    taken.then(
      (yes) => { if (yes) stats.served++; else forward(req, res, expect); },
      (err: unknown) => {
        parent.postMessage({ t: 'error', message: `handler: ${(err as Error).message}` });
        if (res.headersSent) res.destroy();
        else forward(req, res, expect);
      },
    );
    return;
  }
  forward(req, res, expect);
}

function forward(req: IncomingMessage, res: ServerResponse, expect: boolean): void {
  stats.forwarded++;
  // a door that sent the 100 and then passed the request on (an upload over its budget): the
  // client is sending already, main's 100 must not be relayed a second time
  forwarder.forward(req, res, expect && !continued.has(res));
}

/** Responses whose `100 Continue` the door sent. */
const continued = new WeakSet<ServerResponse>();

// the thread cannot tell which route streams its body: a stalled body is cut here, one that is
// only slow is main's to judge (its own deadline on the forwarded request, with the route known)
const deadlines = new BodyDeadlines(init.bounds.bodyTimeoutMs, () => true);
const cap = new ConnectionCap(init.slots, init.bounds);

const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
  deadlines.track(req, res);
  dispatch(req, res);
};
// a client waiting for `100 Continue`: a door that takes the request sends the 100 itself;
// one forwarded lets main decide (a 401, 413 or 507 comes instead of the 100, as on main)
const onContinue = (req: IncomingMessage, res: ServerResponse): void => {
  const write = res.writeContinue.bind(res);
  res.writeContinue = (cb?: () => void) => { continued.add(res); write(cb); };
  deadlines.track(req, res);
  dispatch(req, res, true);
};
// an upgrade (WebSocket) is main's: the connection is joined to main's server from here on
const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
  stats.forwarded++;
  forwarder.tunnel(req, socket, head);
};
const server = http.createServer(serverOptions(init.bounds), onRequest);
cap.attach(server);
checkHeadersWhileConnected(server);
server.on('clientError', answerClientError);
server.on('checkContinue', onContinue);
server.on('upgrade', onUpgrade);
const https = new ThreadTlsListener(onRequest, (message) => parent.postMessage({ t: 'error', message }), cap, onContinue, onUpgrade);
// before any message: a later `tls` message is newer than the init
https.apply(init.tls);

// the client sockets' bytes, for main's `HTTP` session (main skips the forwarded hop)
const meter = new ThreadTrafficMeter(server, (peers) => parent.postMessage({ t: 'traffic', peers }));

parent.on('message', (m: ToWorker) => {
  switch (m.t) {
    case 'door': setDoor(m); break;
    case 'drop': setDoor(undefined); break;
    case 'stats': parent.postMessage({ t: 'stats', id: m.id, ...stats }); break;
    case 'tls': https.apply(m.tls); break;
    case 'bounds':
      cap.update(m.bounds);
      applyServerBounds(server, m.bounds);
      https.bounds();
      deadlines.timeoutMs = m.bounds.bodyTimeoutMs;
      break;
    case 'close':
      void Promise.all([https.close(), new Promise((resolve) => server.close(resolve))]).then(() => {
        meter.close();
        deadlines.close();
        setDoor(undefined);
        parent.close();
      });
      server.closeAllConnections();
      // forwarded requests and joined upgrade connections too (the server's close waits for those)
      forwarder.close();
      break;
  }
});

server.listen({ host: init.host, port: init.port, reusePort: true }, () => {
  setDoor(init.door);
  parent.postMessage({ t: 'ready' });
  // the thread's own heap comes back after its start and after bursts, as main's does (core/runtime/quiet-gc.ts)
  startQuietCollector();
});
server.on('error', (err) => {
  parent.postMessage({ t: 'error', message: `listen: ${err.message}` });
  process.exit(1);
});
