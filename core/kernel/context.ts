import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { BootError, eventsRef, type EventsService, type HttpScope, type PluginContext, type ServiceRef } from '../../sdk/index.ts';
import type { DepsMap } from '../../sdk/refs.ts';
import type { Kernel } from './kernel.ts';
import { getPath } from '../config/schema-walk.ts';
import { vendorConfig, type LoadedPlugin } from './loader.ts';
import { readSections } from './read-sections.ts';

/** Mounts one plugin in its own encapsulated fastify scope and runs its setup. */
export async function mountPlugin(k: Kernel, p: LoadedPlugin): Promise<void> {
  const { def } = p;
  const log = k.log.child({ component: def.name });
  const deps: Record<string, unknown> = {};
  for (const [key, ref] of Object.entries((def.deps ?? {}) as DepsMap)) deps[key] = k.services.resolve(ref);
  const config = def.configKey && getPath(k.config, def.configKey) !== undefined
    ? getPath(k.config, def.configKey)
    : vendorConfig(p);
  const dataDir = resolve(k.config.db.dir, 'plugins', def.name);
  const sections = readSections(k.config, def.reads ?? [], def.name);
  const life = k.lifecycle;
  try {
    const state = k.state.forPlugin(def.name, def.rootState);
    await k.http.register(async (scope: HttpScope) => {
      const ctx: PluginContext<unknown, DepsMap> = {
        name: def.name,
        config,
        sections,
        deps: deps as PluginContext<unknown, DepsMap>['deps'],
        log,
        http: scope,
        hooks: k.hooks.forTapper(def.name),
        provide: <T>(ref: ServiceRef<T, boolean>, impl: T) => {
          if (!(def.provides ?? []).some((r) => r.id === ref.id)) {
            throw new Error(`provides '${ref.id}' without declaring it in 'provides'`);
          }
          k.services.provide(ref, impl);
          // the catalogue goes in before any consumer mounts, so emitters' types come first
          if (ref.id === eventsRef.id) (impl as EventsService).declare(k.eventTypes);
        },
        onClose: (fn) => life.onClose(def.name, fn),
        retain: <T>(key: string, create: () => T): T => {
          const full = `${def.name}:${key}`;
          if (!k.retained.has(full)) k.retained.set(full, create());
          return k.retained.get(full) as T;
        },
        keep: (o) => k.kept.keep(def.name, o, (fn) => life.onClose(def.name, fn), log),
        get dataDir() {
          mkdirSync(dataDir, { recursive: true });
          return dataDir;
        },
        onReady: (fn) => life.onReady(def.name, fn),
        onListen: (fn) => life.onListen(def.name, fn),
        onShutdown: (fn) => life.onShutdown(def.name, fn),
        state,
      };
      await def.setup(ctx as never);
    });
  } catch (err) {
    throw new BootError(`Plugin '${def.name}' startup failed: ${(err as Error).message}`, { cause: err });
  }
}
