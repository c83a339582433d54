import { mkdirSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import {
  BootError, placeholdersRef, serverRef, kernelHooksRef, type ConfigData, type HttpScope,
} from '../sdk/index.ts';
import { ConfigStore } from './config/store.ts';
import { parseAddress } from './config/address.ts';
import { semanticErrors, typeErrors } from './config/validate.ts';
import { createLogger } from './log/logger.ts';
import type { LogRing } from './log/ring.ts';
import { DbStore } from './store/db.ts';
import { ServiceContainer } from './kernel/container.ts';
import { HookRegistry } from './kernel/hook-registry.ts';
import { orderPlugins } from './kernel/graph.ts';
import { loadPlugins, vendorConfigErrors } from './kernel/loader.ts';
import { mountPlugin } from './kernel/context.ts';
import type { CoreModule, Kernel } from './kernel/kernel.ts';
import { createServer } from './http/server.ts';
import { registerSwagger } from './http/swagger.ts';
import { frontDoorRoutes } from './http/front-door.ts';
import { metadataRoutes } from './http/metadata-routes.ts';
import { configRoutes } from './http/config-routes.ts';
import { profilingRoutes } from './http/profiling.ts';
import { removeStaleTemps } from './store/stale-temps.ts';
import { refuseConfigUnderDisk } from './store/served-state.ts';
import { Placeholders } from './process/placeholder-registry.ts';
import { CORE_MODULES } from './modules.ts';

export interface BuildOptions {
  /** Where PUT /api/v3/config stores; default `<db.dir>/config.json` for a bare config. */
  configStore?: ConfigStore;
  env?: NodeJS.ProcessEnv;
  /** State kept across reloads (memfs files, the log ring). */
  retained?: Map<string, unknown>;
  /** Log to stdout as well as to the ring (the CLI does; tests do not). */
  stdoutLog?: boolean;
  requestReload?: () => void;
}

export interface App {
  readonly http: HttpScope;
  readonly kernel: Kernel;
  /** Tells the app its listener is bound: records the port and runs `onListen` taps. */
  listening(port: number): Promise<void>;
  /** Closes plugins and core in reverse order; safe to call twice. */
  close(): Promise<void>;
}

function formatErrors(errs: Record<string, string[]>): string {
  return Object.entries(errs).map(([k, m]) => `  ${k}: ${m.join('; ')}`).join('\n');
}

/** Builds the whole app from a configuration. Never listens. */
export async function buildApp(config: ConfigData, opts: BuildOptions = {}): Promise<App> {
  const errs = { ...typeErrors(config) };
  if (Object.keys(errs).length === 0) Object.assign(errs, semanticErrors(config));
  if (Object.keys(errs).length) throw new BootError(`invalid configuration:\n${formatErrors(errs)}`);

  mkdirSync(resolve(config.db.dir), { recursive: true });
  const retained = opts.retained ?? new Map<string, unknown>();
  const env = opts.env ?? process.env;
  const ring = retained.get('core:log') as LogRing | undefined;
  const { log, ring: logRing } = createLogger({ level: config.log.level, maxLines: config.log.max_lines, stdout: !!opts.stdoutLog, ring });
  retained.set('core:log', logRing);

  const configStore = opts.configStore ?? new ConfigStore(
    { path: resolve(config.db.dir, 'config.json'), stored: config, active: config, env: { overrides: [], errors: {}, warnings: [] }, fresh: false }, env);
  const hooks = new HookRegistry();
  const services = new ServiceContainer();
  const http = createServer({ log, bodyLimit: config.api.max_body_size_mbytes * 1024 * 1024, hooks });
  const db = await DbStore.open(resolve(config.db.dir));
  await removeStaleTemps(dirname(configStore.path), basename(configStore.path));
  refuseConfigUnderDisk(configStore.path, config);

  const closers: Array<() => unknown> = [];
  const shutdowns: Array<() => unknown> = [];
  let port = 0;
  const startedAt = Date.now();
  const kernel: Kernel = {
    config, configStore, log, ring: logRing, http, hooks, services, db, retained, env, plugins: [],
    server: {
      port: () => port,
      host: () => { const { host } = parseAddress(config.address); return host === '0.0.0.0' || host === '::' ? 'localhost' : host; },
      startedAt,
      setPort: (p) => { port = p; },
    },
    onClose: (fn) => { closers.push(fn); },
    onShutdown: (fn) => { shutdowns.push(fn); },
    requestReload: () => opts.requestReload?.(),
  };

  services.provide(serverRef, kernel.server);
  services.provide(placeholdersRef, new Placeholders());

  await registerSwagger(http);
  await http.register(frontDoorRoutes(kernel));
  await http.register(metadataRoutes(kernel));
  await http.register(configRoutes(kernel));
  if (config.debug.profiling) await http.register(profilingRoutes());
  for (const mod of CORE_MODULES as CoreModule[]) await mod(kernel);

  const loaded = await loadPlugins(config.plugins);
  const vendorErrs = loaded.flatMap(vendorConfigErrors);
  if (vendorErrs.length) throw new BootError(`invalid plugin configuration:\n  ${vendorErrs.join('\n  ')}`);
  const ordered = orderPlugins(
    loaded.map((p) => ({ ...p, name: p.def.name, deps: Object.values(p.def.deps ?? {}), provides: [...(p.def.provides ?? [])] })),
    services.ids(),
  );
  for (const p of ordered) {
    await mountPlugin(kernel, p, closers);
    kernel.plugins.push(p.def.name);
  }
  await http.ready();
  log.info({ plugins: kernel.plugins }, 'core ready');

  let closing: Promise<void> | undefined;
  return {
    http,
    kernel,
    async listening(p: number) {
      port = p;
      await hooks.get(kernelHooksRef).onListen.promise();
    },
    close() {
      closing ??= (async () => {
        for (const fn of [...shutdowns, ...closers.reverse()]) {
          try { await fn(); } catch (err) { log.error({ err }, 'close failed'); }
        }
        await http.close();
        await services.dispose();
        log.info('core closed');
      })();
      return closing;
    },
  };
}
