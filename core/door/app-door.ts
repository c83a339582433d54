import type { Logger } from 'pino';
import type { FastifyRequest } from 'fastify';
import {
  CorsPolicy, MimeTable, PUBLIC, basicAuthRef, runCredentialsRef, type RunCredentials, fsServeHooksRef, httpHooksRef, type BasicAuthService, type FilesystemService, type FileDoor as FileDoorService, type HttpScope,
} from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';
import type { HookRegistry } from '../kernel/hook-registry.ts';
import type { ServiceContainer } from '../kernel/container.ts';
import { bodyDeadlinesOf } from '../http/server.ts';
import { CidrSet } from '../../sdk/client-address.ts';
import { installDoor } from './install.ts';
import { apiFiles, mainDoor, type ApiFiles } from './main.ts';
import type { FileDoor } from './door.ts';
import type { AppThreads } from './threads/pool.ts';
import { PendingUploads } from './pending.ts';
import { startDoorThreads } from './threads-main.ts';
import { DoorTapModules } from './tap-modules.ts';

/*
 * The door of one app on the main thread: in front of the router, with the routes it leaves to
 * the router (the API's own paths below a catch-all mount), and the door service plugins put
 * their tap modules in (main's copy; the serving threads load theirs, see thread-door.ts).
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

/** Main's door of one app and what goes with it. */
export interface AppDoor {
  door: FileDoor;
  /** The door service (`fileDoorRef`). */
  service: FileDoorService;
  /** Starts the door in the serving threads (when the app listens: every filesystem and tap is known then). */
  startThreads(threads: AppThreads): void;
  /** Stops what the door runs for the app (the app closes). */
  close(): void;
  /** The same read answer and upload taker for `/api/v3/fs/{name}/...`. */
  api: ApiFiles;
}

/** Installs main's door for the app. */
export function appDoor(o: AppDoorOptions): AppDoor {
  const serve = o.hooks.get(fsServeHooksRef);
  const pending = new PendingUploads();
  const basicAuth = () => (o.services.has(basicAuthRef.id) ? o.services.resolve(basicAuthRef) as BasicAuthService : undefined);
  const httpHooks = o.hooks.get(httpHooksRef);
  let heads: ReadonlySet<string> = new Set();
  let headCount = -1;
  const door = mainDoor({
    filesystems: o.filesystems,
    hooks: serve,
    corsOrigins: o.config.storage.cors.origins,
    mime: MimeTable.load(o.config.storage.mimetypes_file),
    basicAuth,
    runs: () => (o.services.has(runCredentialsRef.id) ? o.services.resolve(runCredentialsRef) as RunCredentials : undefined),
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
    pending,
    vouched: (req) => {
      if (httpHooks.peer.taps.length === 0) return undefined;
      // the tap reads the request line and headers, and removes its header: it gets a copy of them
      const shim = { headers: { ...req.headers }, method: req.method, url: req.url, raw: req, socket: req.socket } as unknown as FastifyRequest;
      const v = httpHooks.peer.call(shim);
      return typeof v === 'string' ? v : v?.address;
    },
  });
  installDoor(o.http, door, bodyDeadlinesOf(o.http));
  preflights(o.http, o.config.storage.cors.origins);
  const modules = new DoorTapModules(serve);
  let stopThreads = () => {};
  const startThreads = (threads: AppThreads) => {
    if (threads.count === 0) return;
    const started = startDoorThreads({
      threads, filesystems: o.filesystems(), hooks: serve, corsOrigins: o.config.storage.cors.origins,
      mimetypesFile: o.config.storage.mimetypes_file, taps: modules.wire(), heads: o.routeHeads, basicAuth, pending,
      fromTap: (name, m) => modules.fromTap(name, m),
      reportOf: (name, r) => modules.reportOf(name, r),
      warn: (message) => o.log.warn({ component: 'HTTP' }, message),
    });
    modules.toThreads = started.broadcast;
    const untapped = o.hooks.onTap((id) => { if (id === fsServeHooksRef.id) started.refresh(); });
    stopThreads = () => { untapped(); started.close(); };
  };
  const close = () => {
    stopThreads();
    modules.close();
  };
  const api = apiFiles(o.filesystems, MimeTable.load(o.config.storage.mimetypes_file), pending);
  return { door, service: modules, startThreads, api, close };
}

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
