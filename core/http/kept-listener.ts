import type { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../runtime/builtin.ts';
import type { Logger } from 'pino';
import type { ConfigData } from '../config/config-data.ts';
import type { KeptResources } from '../kernel/keep.ts';
import { applyServerBounds, KEEP_ALIVE_MS, serverOptions, type ListenerBounds } from './listener-bounds.ts';
import { checkHeadersWhileConnected } from './header-check.ts';
import { listenAddress } from './listen-address.ts';
import { servingThreadCount } from '../door/threads/count.ts';
import { requestHasBody } from '../../sdk/linger-close.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
type Listener = (...args: unknown[]) => void;
type Listeners = Map<string | symbol, Listener[]>;

/** Where and how the API's listener is bound: what a reload must not change to keep it. */
export interface KeptListenerSettings {
  host: string;
  port: number;
  /** Bound with `reusePort` (serving threads share the port). */
  reusePort: boolean;
}

/**
 * The API's HTTP listener as the service keeps it across config reloads (core/app.ts keeps one
 * through the service's KeptResources while `address` and the serving threads' port sharing stay
 * the same): its keep-alive connections and the requests in flight on them live on, and the next
 * request on such a connection is answered by the new app.
 *
 * Each app's fastify takes the server through `serverFactory` (`factory`) and never binds it
 * (`listen` here does, once). Whatever an app attaches to the server (fastify's request handler
 * and clientError answer, the file door in front of it, the connection cap, the traffic meter) is
 * taken off again when the app closes (`detach`: every listener goes back to what it was before
 * the app), so the next app starts from the bare listener and nothing of a closed app answers.
 * Between two apps (and while the next one is built) a request is answered 503.
 */
export class KeptListener {
  readonly server: Server;
  #handler: Handler | undefined;
  #bare: Listeners | undefined;
  /** An app is attached and ready: requests reach its listeners (else 503). */
  #open = false;

  constructor(bounds: ListenerBounds) {
    this.server = http.createServer(serverOptions(bounds), (req, res) => this.#handler?.(req, res));
    // what fastify sets on a server it makes itself (a serverFactory's server gets none of it)
    this.server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.server.requestTimeout = 0;
    this.server.setTimeout(0);
    checkHeadersWhileConnected(this.server);
    // an app being built has its listeners on the server already (the door, fastify's router, whose
    // routes are not compiled before it is ready): its requests are answered 503 until `activate`
    // every request passes here: no copy of the arguments on the way through
    const emit = this.server.emit;
    const gate = (): boolean => this.#open;
    this.server.emit = function gatedEmit(this: Server, name: string | symbol, a?: unknown, b?: unknown): boolean {
      if ((name === 'request' || name === 'checkContinue') && !gate()) {
        unavailable(a as IncomingMessage, b as ServerResponse);
        return true;
      }
      // eslint-disable-next-line prefer-rest-params
      return emit.apply(this, arguments as unknown as Parameters<Server['emit']>);
    } as Server['emit'];
  }

  /** fastify's `serverFactory` for the next app: its handler answers once the app is ready (`activate`). */
  readonly factory = (handler: Handler): Server => {
    if (this.#bare) throw new Error('the HTTP listener is still attached to another app');
    this.#bare = snapshot(this.server);
    this.#handler = handler;
    return this.server;
  };

  /** The attached app is ready: its listeners answer from now on. */
  activate(): void {
    if (this.#bare) this.#open = true;
  }

  /** A kept listener takes a reloaded config's header bounds (node reads them per connection). */
  rebound(bounds: ListenerBounds): void {
    applyServerBounds(this.server, bounds);
  }

  /** Binds it (a kept listener is bound already: nothing to do). */
  async listen(s: KeptListenerSettings): Promise<void> {
    if (this.server.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      // node's listen options take reusePort (its types lack it)
      this.server.listen({ host: s.host, port: s.port, reusePort: s.reusePort } as { host: string; port: number }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * The app that took the server closes (once its children stopped, before its fastify closes: its
   * requests in flight finish, new ones get 503 until the next app is ready): every listener it
   * attached goes.
   */
  detach(): void {
    this.#open = false;
    if (!this.#bare) return;
    restore(this.server, this.#bare);
    this.#bare = undefined;
    this.#handler = undefined;
  }

  /** The listener itself goes (shutdown, or the address moved): every connection is closed. */
  async close(): Promise<void> {
    this.detach();
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => { this.server.close(() => resolve()); });
    this.server.closeAllConnections();
    await closed;
  }
}

/**
 * Between two apps (or before the first is ready): 503. The connection stays (a keep-alive client
 * asks again on it), unless a body was sent: that one is not read, the connection closes after it.
 */
function unavailable(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1', ...(requestHasBody(req) ? { Connection: 'close' } : {}) });
  res.end(JSON.stringify({ code: 503, message: 'Service Unavailable', details: ['the service is reloading its configuration'] }));
}

function snapshot(server: Server): Listeners {
  const out: Listeners = new Map();
  for (const name of server.eventNames()) out.set(name, server.rawListeners(name) as Listener[]);
  return out;
}

/** Puts back exactly the listeners of `bare` (in their order) and drops every other one. */
function restore(server: Server, bare: Listeners): void {
  for (const name of server.eventNames()) {
    const now = server.rawListeners(name) as Listener[];
    const want = bare.get(name) ?? [];
    if (now.length === want.length && now.every((l, i) => l === want[i])) continue;
    server.removeAllListeners(name);
    for (const l of want) (server as EventEmitter).on(name, l);
  }
  for (const [name, want] of bare) {
    if (server.listenerCount(name) === 0) for (const l of want) (server as EventEmitter).on(name, l);
  }
}

/**
 * The service's API listener for the app being built: the one the previous app used when the
 * address and the port sharing are unchanged (its bounds renewed), else a new one, unbound (the
 * service binds it). `onClose`: the app's close step for it, after its fastify closed.
 */
export async function keepListener(kept: KeptResources, config: ConfigData, bounds: ListenerBounds, log: Logger,
  onClose: (fn: () => Promise<void>) => void): Promise<KeptListener> {
  const { host, port } = listenAddress(config.address, config);
  const settings: KeptListenerSettings = { host, port, reusePort: servingThreadCount(config.http.threads) > 0 };
  const listener = await kept.keep('core', {
    key: 'http', settings, open: async () => new KeptListener(bounds), close: (l) => l.close(),
    holds: (l) => { const a = l.server.address(); return a && typeof a === 'object' ? [{ key: 'address', proto: 'tcp', port: a.port }] : []; },
  }, onClose, log);
  listener.rebound(bounds);
  return listener;
}
