import { mkdirSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import {
  BootError, childrenRef, ingestHooksRef, isBootError, MimeTable, filesystemsRef, fileDoorRef, placeholdersRef, runCredentialsRef, serverRef, streamTableRef, tlsCertificatesRef,
  type FilesystemService, type HttpScope, type PluginDefinition,
} from '../sdk/index.ts';
import type { ClientTraffic } from '../sdk/server.ts';
import type { ConfigData } from './config/config-data.ts';
import { acmeChallengeRoutes, certificateService } from './tls/provide.ts';
import { ConfigStore } from './config/store.ts';
import { parseAddress } from './config/address.ts';
import { createLogger } from './log/logger.ts';
import type { LogRing } from './log/ring.ts';
import { ServiceContainer, type ServiceOverride } from './kernel/container.ts';
import { HookRegistry } from './kernel/hook-registry.ts';
import type { LoadedPlugin, ModuleImporter } from './kernel/loader.ts';
import { mountPlugin } from './kernel/context.ts';
import type { Kernel } from './kernel/kernel.ts';
import { Lifecycle } from './kernel/lifecycle.ts';
import { KeptResources } from './kernel/keep.ts';
import { CORE_SERVICES, isBootPlan, planBoot, type BootPlan } from './kernel/plan.ts';
import { StateService } from './kernel/state.ts';
import { eventCatalogue } from './kernel/event-types.ts';
import { currentBuild } from './config/build.ts';
import { createServer } from './http/server.ts';
import { keepListener, type KeptListener } from './http/kept-listener.ts';
import { SerializerCache } from './http/serializer-cache.ts';
import { listenerBounds } from './http/listener-bounds.ts';
import { registerSwagger } from './http/swagger.ts';
import { frontDoorRoutes } from './http/front-door.ts';
import { configRoutes } from './http/config-routes.ts';
import { profilingRoutes } from './http/profiling.ts';
import { fsApiRoutes } from './http/fs-routes.ts';
import { installRedirects, routerRoutes } from './http/router-routes.ts';
import { fileRedirects } from './http/router-config.ts';
import { installEncoding } from './http/encoding.ts';
import { removeStaleTemps } from './store/stale-temps.ts';
import { refuseConfigUnderDisk } from './store/served-state.ts';
import { Placeholders } from './process/placeholder-registry.ts';
import { RunCredentialTable } from './process/run-credentials.ts';
import { Streams } from './streams/table.ts';
import { converterRegistry } from './streams/remux.ts';
import type { ServingThreadPool } from './door/threads/pool.ts';
import { trackRouteHeads } from './door/threads/route-heads.ts';
import { appDoor } from './door/app-door.ts';
import { ThreadTrafficMeter } from './door/threads/traffic.ts';
import { isServingThreadSocket } from './door/threads/module.ts';
import { childrenService } from './process/confine/provide.ts';
import { servingThreadCount } from './door/threads/count.ts';

export interface BuildOptions {
  /** Where PUT /api/v3/config stores; default `<db.dir>/config.json` for a bare config. */
  configStore?: ConfigStore;
  env?: NodeJS.ProcessEnv;
  /** State kept across reloads (memfs files, the log ring). */
  retained?: Map<string, unknown>;
  /**
   * Resources kept across reloads (`ctx.keep`, the stream table); the service owns one for its
   * life. Without it the app's own: everything is closed with the app.
   */
  kept?: KeptResources;
  /** Log to stdout as well as to the ring (the CLI does; tests do not). */
  stdoutLog?: boolean;
  requestReload?: () => void;
  /** What a reload would refuse (see Kernel.checkReload); without it nothing is refused. */
  checkReload?: () => Promise<Record<string, string[]> | undefined>;
  /** Folder plugin paths and packages are found from; default the config file's folder, else the cwd. */
  pluginBase?: string;
  /** Plugin definitions mounted after the configured ones (the test kit passes a plugin under test). */
  plugins?: readonly { def: PluginDefinition; entryConfig?: unknown }[];
  /**
   * Services provided before any plugin mounts and kept: a plugin providing the same
   * single-provider ref is not asked to (the test kit's stand-ins for real services).
   */
  overrides?: readonly ServiceOverride[];
  /** The service's serving threads (`http.threads`); without them the app serves from its own loop only. */
  threads?: ServingThreadPool;
  /**
   * The plugins the process loaded at its start: a reload mounts these again and imports nothing
   * (code is loaded only from what the operator wrote, once).
   */
  started?: readonly LoadedPlugin[];
  /** How a located plugin module is imported (default `import()`; a test counts the calls). */
  importModule?: ModuleImporter;
}

export interface App {
  readonly http: HttpScope;
  readonly kernel: Kernel;
  /** The configured plugins this app loaded (the process's start list for its reloads). */
  readonly loaded: readonly LoadedPlugin[];
  /** The service's API listener (kept across reloads); none for an app built without a service (it listens through fastify). */
  readonly listener?: KeptListener;
  /** Tells the app its listener is bound: records the port and runs the `onListen` taps. */
  listening(port: number): Promise<void>;
  /** Runs `onShutdown` then `onClose` taps (newest first), flushes state, closes HTTP; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Builds the whole app. Never listens. Three steps: the plan (config validated, plugins loaded,
 * graph ordered: core/kernel/plan.ts; a caller that planned passes the plan itself), the core
 * (kernel services and the core's own routes), the mount (each plugin in plan order, then `onReady`).
 */
export async function buildApp(config: ConfigData | BootPlan, opts: BuildOptions = {}): Promise<App> {
  const plan = isBootPlan(config) ? config : await planBoot(config, { ...opts, configPath: opts.configStore?.path });
  const core = await buildCore(plan, opts);
  try {
    await mountPlan(core.kernel, plan);
    await core.kernel.lifecycle.ready();
    await core.kernel.http.ready();
  } catch (err) {
    // what mounted before the failure is closed again: children, timers, pending writes
    await core.close();
    throw isBootError(err) ? err : new BootError((err as Error).message, { cause: err });
  }
  core.kernel.log.info({ plugins: core.kernel.plugins }, 'core ready');
  core.kernel.configStore.useStarted(plan.configured);
  return { http: core.kernel.http, kernel: core.kernel, loaded: plan.configured, listening: core.listening, close: core.close, listener: core.listener };
}

/** Mounts the plan's plugins: the required ones first, then the rest in graph order. */
async function mountPlan(kernel: Kernel, plan: BootPlan): Promise<void> {
  const missing = CORE_SERVICES.filter((id) => !kernel.services.ids().has(id));
  if (missing.length) throw new BootError(`the core did not provide ${missing.join(', ')}`);
  for (const p of [...plan.required, ...plan.order]) {
    await mountPlugin(kernel, p);
    kernel.plugins.push(p.def.name);
  }
}

interface Core { kernel: Kernel; listening(port: number): Promise<void>; close(): Promise<void>; listener?: KeptListener }

/** The kernel's services and the core's own routes (front door, config, fs API, router, ACME), before any plugin. */
async function buildCore(plan: BootPlan, opts: BuildOptions): Promise<Core> {
  const { config } = plan;
  mkdirSync(resolve(config.db.dir), { recursive: true });
  const retained = opts.retained ?? new Map<string, unknown>();
  const env = opts.env ?? process.env;
  const ring = retained.get('core:log') as LogRing | undefined;
  const { log, ring: logRing } = createLogger({
    level: config.log.level, maxLines: config.log.max_lines, format: config.log.format, topics: config.log.topics,
    stdout: opts.stdoutLog ? process.stdout : undefined, ring,
  });
  retained.set('core:log', logRing);
  // compiled once per process: every reload compiling them again grew V8's eval cache (serializer-cache.ts)
  const serializers = (retained.get('core:serializers') as SerializerCache | undefined) ?? new SerializerCache();
  retained.set('core:serializers', serializers);

  const configStore = opts.configStore ?? new ConfigStore(
    { path: resolve(config.db.dir, 'config.json'), stored: config, active: config, env: { overrides: [], errors: {}, warnings: [] }, fresh: false, unsaved: false }, env);
  const hooks = new HookRegistry();
  const services = new ServiceContainer();
  await removeStaleTemps(dirname(configStore.path), basename(configStore.path));
  refuseConfigUnderDisk(configStore.path, config);
  const bounds = listenerBounds(config.http, config.api.access.trusted_proxies);
  const afterHttp: Array<() => Promise<void>> = []; // the service's API listener outlives its apps (kept-listener.ts)
  const listener = opts.kept ? await keepListener(opts.kept, config, bounds, log, (fn) => { afterHttp.push(fn); }) : undefined;
  const http = createServer({
    log, bodyLimit: config.api.max_body_size_mbytes * 1024 * 1024, hooks, api: config.api, threadKey: opts.threads?.key, serializers,
    bounds, slots: opts.threads?.connectionSlots, listener,
  });
  // before any route: a serving thread answering the disk mount must know every other route's prefix
  const routeHeads = trackRouteHeads(http, fileRedirects(config.router).keys());
  installRedirects(http, config.router);
  // the file door, before the router: mounts come from the registry as plugins provide filesystems
  const door = appDoor({
    http, config, hooks, services, filesystems: () => services.resolve(filesystemsRef) as readonly FilesystemService[], routeHeads,
    threadKey: opts.threads?.key, log,
  });
  services.provide(fileDoorRef, door.service);
  installEncoding(http);
  const lifecycle = new Lifecycle(log);
  const state = new StateService(config.db.dir);
  // the configured port until the listener tells its own (`:0` is chosen at listen): a `{memfs}`
  // resolved at restore then says what it will after the listen, and is not resolved again (46.4)
  const bound = parseAddress(config.address);
  let port = Number.isInteger(bound.port) ? bound.port : 0;
  const localHost = bound.host === '0.0.0.0' || bound.host === '::' ? 'localhost' : bound.host;
  const startedAt = Date.now();
  // the listener's bytes per client address, main's sockets and the serving threads' alike
  const traffic = new Set<(t: readonly ClientTraffic[]) => void>();
  const toTraffic = (t: readonly ClientTraffic[]) => { for (const fn of traffic) fn(t); };
  // the threads' hops to main are not counted here: their clients' bytes come from the threads
  const meter = new ThreadTrafficMeter(http.server, toTraffic, { skip: isServingThreadSocket, atClose: true });
  const kernel: Kernel = {
    config, configStore, log, ring: logRing, http, hooks, services, lifecycle, state, retained, env, plugins: [], kept: opts.kept ?? new KeptResources(),
    eventTypes: eventCatalogue([...currentBuild().builtIns.map((b) => b.def), ...plan.order.map((p) => p.def)]),
    server: {
      port: () => port,
      host: () => localHost,
      startedAt,
      setPort: (p) => { port = p; },
      onTraffic: (fn) => { traffic.add(fn); },
    },
    requestReload: () => opts.requestReload?.(),
    checkReload: async () => opts.checkReload?.(),
  };

  for (const o of plan.overrides) services.override(o.ref, o.impl);
  services.provide(serverRef, kernel.server);
  // the kept listener: this app's listeners go before fastify closes (503 until the next app), the listener after it
  const close = closer(kernel, () => listener?.detach(), async () => { for (const fn of afterHttp) await fn(); });
  const listening = async (p: number) => {
    port = p;
    await lifecycle.listen(p);
  };
  try {
    const acme = await coreServices(kernel, { door, routeHeads, toTraffic, meter, traffic }, opts);
    await coreRoutes(kernel, door, acme);
  } catch (err) {
    await close();
    throw isBootError(err) ? err : new BootError((err as Error).message, { cause: err });
  }
  return { kernel, listening, close, listener };
}

/** Closes an app once: `onShutdown` then `onClose` taps, pending state, HTTP, services. */
function closer(k: Kernel, beforeHttp: () => void, afterHttp: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= (async () => {
      await k.lifecycle.stop();
      await k.state.flush();
      beforeHttp();
      await k.http.close();
      await afterHttp();
      await k.services.dispose();
      k.log.info('core closed');
    })();
    return closing;
  };
}

type Door = ReturnType<typeof appDoor>;
type Acme = Awaited<ReturnType<typeof certificateService>>['acme'];

/** What the serving threads' part of the core is built from. */
interface ThreadParts {
  door: Door;
  routeHeads: ReturnType<typeof trackRouteHeads>;
  toTraffic: (t: readonly ClientTraffic[]) => void;
  meter: ThreadTrafficMeter;
  traffic: Set<unknown>;
}

/** The services the core provides before any plugin (placeholders, TLS, children) and the serving threads' part; gives ACME, if on. */
async function coreServices(k: Kernel, parts: ThreadParts, opts: BuildOptions): Promise<Acme> {
  const { config, services, lifecycle, log } = k;
  const { door, routeHeads, toTraffic, meter, traffic } = parts;
  // the one filesystem registry: the fs API, `{fs:<name>}` and cleanup rules all look here (live list)
  const filesystems = () => services.resolve(filesystemsRef) as readonly FilesystemService[];
  services.provide(placeholdersRef, new Placeholders({ filesystems, server: k.server }));
  // a child's credential for the service's own listeners: one per run, never a configured secret
  services.provide(runCredentialsRef, new RunCredentialTable((err) => log.error({ err }, 'a run credential watcher failed')));
  // one table of live streams for every ingest protocol, kept across reloads (a kept publisher's
  // stream stays for the restarted readers); its publishers end with the service
  // it admits clients with this app's ingest hooks (a kept publisher's end reaches the app then running)
  const tableOpts = { converters: converterRegistry(), log: log.child({ component: 'streams' }), hooks: k.hooks.get(ingestHooksRef) };
  const streams = await k.kept.keep('core', {
    key: 'streams', settings: {}, open: async () => new Streams(tableOpts), close: async (s) => s.close(),
  }, (fn) => lifecycle.onClose('streams', fn), log);
  streams.rebind(tableOpts);
  services.provide(streamTableRef, streams);
  const tls = await certificateService(config, log);
  services.provide(tlsCertificatesRef, tls.certs);
  services.provide(childrenRef, childrenService(config, k.configStore.path, k.env, log, k.retained));
  // the threads outlive the app (they hold the port); what this app's plugins run in them goes with it
  const threads = opts.threads?.forApp(servingThreadCount(config.http.threads), routeHeads)
    ?? { count: 0, runDoor: () => () => {}, routeHeads, onTraffic: () => {}, close: () => {} };
  threads.onTraffic(toTraffic);
  lifecycle.onClose('core', async () => { threads.close(); door.close(); meter.close(); traffic.clear(); });
  // the door in the serving threads, once every plugin provided its filesystems and taps
  lifecycle.onListen('core', async () => door.startThreads(threads));
  return tls.acme;
}

/** The core's own routes: OpenAPI, front door, config, fs API, profiling, custom routes, ACME challenges. */
async function coreRoutes(k: Kernel, door: Door, acme: Acme): Promise<void> {
  const { config, http, lifecycle, services } = k;
  await registerSwagger(http);
  await http.register(frontDoorRoutes(k));
  await http.register(configRoutes(k));
  await http.register(fsApiRoutes(() => services.resolve(filesystemsRef) as readonly FilesystemService[], door.api));
  if (config.debug.profiling) await http.register(profilingRoutes());
  await http.register(routerRoutes(config.router));
  if (acme) {
    await http.register(acmeChallengeRoutes(acme));
    // the CA calls back on the HTTP listener, so ordering waits until it is bound
    lifecycle.onListen('core', async () => acme.start());
    lifecycle.onClose('core', async () => acme.close());
  }
}
