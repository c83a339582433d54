import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import type { ThreadFastPath, ThreadFastPathFactory } from './module.ts';
import { Forwarder } from './forward.ts';
import { ThreadTlsListener } from './thread-tls.ts';
import { ThreadTrafficMeter } from './traffic.ts';
import type { ModuleStart, ToWorker, WorkerInit } from './messages.ts';
import { ConnectionCap, answerClientError, applyServerBounds, serverOptions } from '../listener-bounds.ts';
import { BodyDeadlines } from '../body-deadlines.ts';
import { startQuietCollector } from '../../runtime/quiet-gc.ts';

/*
 * A serving thread: its own listener on the API port (reusePort) and, with TLS on, on the HTTPS
 * port (thread-tls.ts), the modules plugins registered (each a fast path over state main
 * broadcasts), and everything else forwarded to main.
 */

interface Loaded {
  port: MessagePort;
  handler?: ThreadFastPath;
}

const init = workerData as WorkerInit;
const parent = parentPort!;
const forwarder = new Forwarder(Buffer.from(init.key), init.forwardPort);
const modules = new Map<string, Loaded>();
let handlers: ThreadFastPath[] = [];
const stats = { served: 0, forwarded: 0 };

function rebuild(): void {
  handlers = [...modules.values()].flatMap((m) => (m.handler ? [m.handler] : []));
}

function drop(name: string): void {
  modules.get(name)?.port.close();
  modules.delete(name);
  rebuild();
}

/** Loads a module; its broadcasts wait in its port until the factory subscribed (the port starts then). */
async function load(m: ModuleStart): Promise<void> {
  drop(m.name);
  const entry: Loaded = { port: m.port };
  modules.set(m.name, entry);
  try {
    const factory = (await import(m.url)).default as ThreadFastPathFactory;
    // replaced or dropped meanwhile (a reload): this load is stale
    if (modules.get(m.name) !== entry) return;
    let deliver: (message: unknown) => void = () => {};
    entry.handler = factory({
      init: m.init,
      snapshot: m.snapshot,
      onMessage: (fn) => {
        deliver = fn;
        m.port.on('message', fn);
      },
      send: (message) => { m.port.postMessage(message); },
      drain: () => {
        for (let r = receiveMessageOnPort(m.port); r; r = receiveMessageOnPort(m.port)) deliver(r.message);
      },
    });
    rebuild();
  } catch (err) {
    parent.postMessage({ t: 'error', message: `module ${m.name} (${m.url}): ${(err as Error).message}` });
  }
}

/** Offers the request to the handlers from `from` on (of the list it started with), else forwards it. */
function dispatch(list: readonly ThreadFastPath[], from: number, req: IncomingMessage, res: ServerResponse, expect = false): void {
  for (let i = from; i < list.length; i++) {
    const taken = list[i]!(req, res);
    if (taken === true) {
      stats.served++;
      return;
    }
    if (taken !== false) {
      // a handler that needed I/O to decide (disk): the next ones get the request only after its no
      taken.then(
        (yes) => { if (yes) stats.served++; else dispatch(list, i + 1, req, res, expect); },
        (err: unknown) => {
          parent.postMessage({ t: 'error', message: `handler: ${(err as Error).message}` });
          if (res.headersSent) res.destroy();
          else dispatch(list, i + 1, req, res, expect);
        },
      );
      return;
    }
  }
  stats.forwarded++;
  // a fast path that sent the 100 and then passed the request on (an upload over its budget): the
  // client is sending already, main's 100 must not be relayed a second time
  forwarder.forward(req, res, expect && !continued.has(res));
}

/** Responses whose `100 Continue` a fast path sent. */
const continued = new WeakSet<ServerResponse>();

// the thread cannot tell which route streams its body: a stalled body is cut here, one that is
// only slow is main's to judge (its own deadline on the forwarded request, with the route known)
const deadlines = new BodyDeadlines(init.bounds.bodyTimeoutMs, () => true);
const cap = new ConnectionCap(init.slots, init.bounds);

const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
  deadlines.track(req, res);
  dispatch(handlers, 0, req, res);
};
// a client waiting for `100 Continue`: a fast path that takes the request sends the 100 itself;
// one forwarded lets main decide (a 401, 413 or 507 comes instead of the 100, as on main)
const onContinue = (req: IncomingMessage, res: ServerResponse): void => {
  const write = res.writeContinue.bind(res);
  res.writeContinue = (cb?: () => void) => { continued.add(res); write(cb); };
  deadlines.track(req, res);
  dispatch(handlers, 0, req, res, true);
};
// an upgrade (WebSocket) is main's: the connection is joined to main's server from here on
const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
  stats.forwarded++;
  forwarder.tunnel(req, socket, head);
};
const server = createServer(serverOptions(init.bounds), onRequest);
cap.attach(server);
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
    case 'module': void load(m); break;
    case 'drop': drop(m.name); break;
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
        for (const name of [...modules.keys()]) drop(name);
        parent.close();
      });
      server.closeAllConnections();
      // forwarded requests and joined upgrade connections too (the server's close waits for those)
      forwarder.close();
      break;
  }
});

server.listen({ host: init.host, port: init.port, reusePort: true }, () => {
  void Promise.all(init.modules.map(load)).then(() => {
    parent.postMessage({ t: 'ready' });
    // the thread's own heap comes back after its start and after bursts, as main's does (core/runtime/quiet-gc.ts)
    startQuietCollector();
  });
});
server.on('error', (err) => {
  parent.postMessage({ t: 'error', message: `listen: ${err.message}` });
  process.exit(1);
});
