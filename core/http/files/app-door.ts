import type { Logger } from 'pino';
import {
  CorsPolicy, MimeTable, PUBLIC, basicAuthRef, fsServeHooksRef, httpHooksRef,
  type BasicAuthService, type ConfigData, type FilesystemService, type FileDoor as FileDoorService, type FileDoorChannel,
  type FileDoorTapFactory, type FileDoorTapModule, type FileDoorTaps, type HttpScope,
} from '../../../sdk/index.ts';
import type { HookRegistry } from '../../kernel/hook-registry.ts';
import type { ServiceContainer } from '../../kernel/container.ts';
import { bodyDeadlinesOf } from '../server.ts';
import { CidrSet } from '../client-address.ts';
import { installDoor } from './install.ts';
import { mainDoor } from './main.ts';
import type { FileDoor } from './door.ts';

/*
 * The door of one app on the main thread: in front of the router, with the routes it leaves to
 * the router (the API's own paths below a catch-all mount), and the door service plugins put
 * their tap modules in (main's copy; the serving threads load theirs, see threads/door-thread.ts).
 */

export interface AppDoorOptions {
  http: HttpScope;
  config: ConfigData;
  hooks: HookRegistry;
  services: ServiceContainer;
  filesystems(): readonly FilesystemService[];
  routeHeads(): readonly string[];
  threadKey?: Buffer;
  log: Logger;
}

/** Installs main's door for the app; returns it and the door service for `fileDoorRef`. */
export function appDoor(o: AppDoorOptions): { door: FileDoor; service: FileDoorService & { modules(): readonly FileDoorTapModule[] } } {
  const serve = o.hooks.get(fsServeHooksRef);
  const httpHooks = o.hooks.get(httpHooksRef);
  let heads: ReadonlySet<string> = new Set();
  let headCount = -1;
  const door = mainDoor({
    filesystems: o.filesystems,
    hooks: serve,
    corsOrigins: o.config.storage.cors.origins,
    mime: MimeTable.load(o.config.storage.mimetypes_file),
    basicAuth: () => (o.services.has(basicAuthRef.id) ? o.services.resolve(basicAuthRef) as BasicAuthService : undefined),
    trusted: new CidrSet(o.config.api.access.trusted_proxies ?? []),
    threadKey: o.threadKey,
    routeHeads: () => {
      const list = o.routeHeads();
      if (list.length !== headCount) {
        headCount = list.length;
        heads = new Set(list);
      }
      return heads;
    },
    missToRouter: () => httpHooks.forward.taps.length > 0,
    warn: (message) => o.log.warn(message),
  });
  installDoor(o.http, door, bodyDeadlinesOf(o.http));
  preflights(o.http, o.config.storage.cors.origins);
  const modules: FileDoorTapModule[] = [];
  const service = {
    modules: () => modules,
    async tap(module: FileDoorTapModule): Promise<FileDoorChannel> {
      const factory = (await import(module.url)).default as FileDoorTapFactory;
      let receive: (m: unknown) => void = () => {};
      let deliver: (m: unknown) => void = () => {};
      const taps = factory({ init: module.init, send: (m) => receive(m), onMessage: (fn) => { deliver = fn; } });
      tapInto(serve, module.name, taps);
      modules.push(module);
      return {
        broadcast: (m) => deliver(m),
        onMessage: (fn) => { receive = fn; },
        close: () => {
          const i = modules.indexOf(module);
          if (i >= 0) modules.splice(i, 1);
          taps.close?.();
        },
      };
    },
  };
  return { door, service };
}

/** A module copy's taps on the app's file hooks, marked as present in every copy of the door. */
function tapInto(serve: ReturnType<typeof fsServeHooksRef.create>, name: string, taps: FileDoorTaps): void {
  const opts = { name: `door:${name}` };
  const mark = <F extends object>(fn: F): F => Object.assign(fn, { [IN_EVERY_DOOR]: true });
  if (taps.preServe) serve.preServe.tap(opts, mark(taps.preServe.bind(taps)));
  if (taps.transformPlaylist) serve.transformPlaylist.tap(opts, mark(taps.transformPlaylist.bind(taps)));
  if (taps.onServed) serve.onServed.tap(opts, mark(taps.onServed.bind(taps)));
  if (taps.onWritten) serve.onWritten.tap(opts, mark(taps.onWritten.bind(taps)));
}

/** Marks a tap that a door module put in: every serving thread runs its own copy. */
export const IN_EVERY_DOOR = Symbol.for('core.files.in-every-door');

/**
 * Preflights the door leaves to the router: `/api/...` answers any origin (as the reference
 * does), paths of other routes the storage CORS origins.
 */
function preflights(http: HttpScope, origins: readonly string[]): void {
  const apiCors = new CorsPolicy(['*']);
  const cors = new CorsPolicy(origins);
  http.options('/api', { config: PUBLIC, schema: { hide: true } }, (request, reply) => apiCors.preflight(request, reply));
  http.options('/api/*', { config: PUBLIC, schema: { hide: true } }, (request, reply) => apiCors.preflight(request, reply));
  http.options('/*', { config: PUBLIC, schema: { hide: true } }, (request, reply) => cors.preflight(request, reply));
}
