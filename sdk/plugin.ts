import type { TSchema, Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { DepsMap, ResolvedDeps, ServiceRef } from './refs.ts';
import type { PluginHooks } from './hooks.ts';
import type { HttpScope } from './http.ts';
import type { ConfigData } from './config/index.ts';

/** The room a plugin gets in `setup`: its config, deps, logger, HTTP scope, hooks. */
export interface PluginContext<C, D extends DepsMap> {
  /** The plugin's name, used for its logger and its hook taps. */
  readonly name: string;
  /** The plugin's own validated config subtree. */
  readonly config: C;
  /** The whole active configuration, read-only, for cross-cutting settings. */
  readonly coreConfig: Readonly<ConfigData>;
  /** The resolved services named in `deps`. */
  readonly deps: ResolvedDeps<D>;
  /** A child logger with `component` set to the plugin's name. */
  readonly log: Logger;
  /** The plugin's encapsulated fastify scope. Routes are protected unless `config: PUBLIC`. */
  readonly http: HttpScope;
  readonly hooks: PluginHooks;
  /** Offers a service to other plugins and the core. */
  provide<T>(ref: ServiceRef<T, boolean>, impl: T): void;
  /** Runs on close, in reverse order of registration; every resource acquired in setup belongs here. */
  onClose(fn: () => void | Promise<void>): void;
  /**
   * State that survives a config reload of the same service (not a restart of the program),
   * created once per key, e.g. the memory filesystem's files.
   */
  retain<T>(key: string, create: () => T): T;
  /** Folder for the plugin's own persistent files (below `db.dir`). */
  readonly dataDir: string;
}

/** A plugin definition; pure data, no side effects at import time. */
export interface PluginDefinition<S extends TSchema | undefined = TSchema | undefined, D extends DepsMap = DepsMap> {
  readonly name: string;
  /**
   * Dotted path of the plugin's subtree in ConfigData (e.g. `rtmp`, `storage.memory`). For a
   * vendor plugin whose key is not part of ConfigData, its settings come from its `plugins` entry.
   */
  readonly configKey?: string;
  /** TypeBox schema of the subtree; validation, defaults and `ctx.config`'s type. */
  readonly configSchema?: S;
  readonly deps?: D;
  /** Refs this plugin provides; the kernel orders providers before consumers. */
  readonly provides?: readonly ServiceRef<unknown, boolean>[];
  setup(ctx: PluginContext<S extends TSchema ? Static<S> : undefined, D>): void | Promise<void>;
}

/**
 * Declares a plugin.
 *
 * @example
 * export default definePlugin({
 *   name: 'hello',
 *   deps: { fs: filesystemsRef },
 *   setup(ctx) {
 *     ctx.http.get('/api/v3/hello', async () => ({ filesystems: ctx.deps.fs.length }));
 *   },
 * });
 */
export function definePlugin<S extends TSchema | undefined = undefined, D extends DepsMap = {}>(
  def: PluginDefinition<S, D>,
): PluginDefinition<S, D> {
  return Object.freeze(def);
}
