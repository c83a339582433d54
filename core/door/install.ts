import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { HttpScope } from '../../sdk/http.ts';
export { continueUpload } from '../../sdk/fs-http.ts';
import type { BodyDeadlines } from '../http/body-deadlines.ts';
import type { FileDoor } from './door.ts';
import { waitsForContinue } from './write.ts';

/*
 * Puts main's door in front of the app's router, on the HTTP listener and (through `frontOf`) on
 * the HTTPS listener, and owns `Expect: 100-continue` on the HTTP listener: the door answers it
 * for the uploads it takes, routes under a `deferContinue` prefix send it when they read the body,
 * every other request gets it at once (node's default).
 */

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const fronts = new WeakMap<object, Handler>();
const deferred = new WeakMap<object, string[]>();
const DEFERRED = Symbol.for('core.fs.continue-deferred');

/** The app's handler with the door in front (the HTTPS listener calls it instead of the router). */
export function frontOf(app: HttpScope): Handler {
  return fronts.get(app) ?? ((req, res) => app.routing(req, res));
}

/**
 * Defers `100 Continue` for routes below `prefix` until they read the body (`continueUpload`), so
 * a refused upload is answered before its body is sent.
 */
export function deferContinue(app: HttpScope, prefix: string): void {
  const list = deferred.get(app.server) ?? [];
  deferred.set(app.server, list);
  if (!list.includes(prefix)) list.push(prefix);
}

/** Installs `door` in front of `app`'s routes; `deadlines` bound the bodies of the uploads it takes. */
export function installDoor(app: HttpScope, door: FileDoor, deadlines: BodyDeadlines): void {
  const server: Server = app.server;
  // the service's listener is kept across reloads: the prefixes of an app before this one go
  deferred.set(server, []);
  const routes = server.listeners('request') as Handler[];
  server.removeAllListeners('request');
  const router: Handler = (req, res) => { for (const l of routes) l.call(server, req, res); };
  // an upload the door took gets the listener's body deadline (the router's requests get it in a hook)
  const took = (req: IncomingMessage, res: ServerResponse) => deadlines.track(req, res);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => dispatch(door, req, res, router, took));
  fronts.set(app, (req, res) => dispatch(door, req, res, (q, s) => app.routing(q, s), took));
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    waitsForContinue(req);
    dispatch(door, req, res, (q, s) => {
      const prefixes = deferred.get(server) ?? [];
      if (prefixes.some((p) => q.url?.startsWith(p))) (q as IncomingMessage & { [DEFERRED]?: boolean })[DEFERRED] = true;
      else s.writeContinue();
      router(q, s);
    }, took);
  });
}

/** The door first, `next` (the router) for what it leaves; `took` for what it takes. */
function dispatch(door: FileDoor, req: IncomingMessage, res: ServerResponse, next: Handler, took: Handler): void {
  const taken = door.handle(req, res);
  if (taken === true) {
    took(req, res);
    return;
  }
  if (taken === false) {
    next(req, res);
    return;
  }
  taken.then((yes) => { if (yes) took(req, res); else next(req, res); }, () => { if (res.headersSent) res.destroy(); else next(req, res); });
}
