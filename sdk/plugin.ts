import type { TSchema, Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { DepsMap, ResolvedDeps, ServiceRef } from './refs.ts';
import type { PluginHooks } from './hooks.ts';
import type { HttpScope } from './http.ts';
import type { KernelConfig } from './config/index.ts';
import type { ConfigErrors } from './config/checks.ts';

/** A top-level section of the kernel's configuration a plugin may declare in `reads` (never another plugin's section). */
export type SectionName = Exclude<keyof KernelConfig, 'plugins'>;

/** A value and everything below it read-only (the type of `ctx.sections`). */
type DeepReadonly<T> = T extends (infer E)[] ? readonly DeepReadonly<E>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;
type Thawed<T> = T extends readonly (infer E)[] ? Thawed<E>[] : T extends object ? { -readonly [K in keyof T]: Thawed<T[K]> } : T;

/**
 * A private, mutable deep copy of a read-only section, for code that wants plain types.
 *
 * @example
 * const service = new AuthService({ auth: thaw(ctx.sections.api.auth) });
 */
export function thaw<T>(value: T): Thawed<T> {
  return structuredClone(value) as Thawed<T>;
}

/** The sections named in `reads`, typed and frozen; reading any other one throws. */
export type ReadSections<R extends readonly SectionName[]> = { readonly [K in R[number]]: DeepReadonly<KernelConfig[K]> };
import type { PluginState } from './state.ts';
import type { EventTypeDeclaration } from './events.ts';

/** The room a plugin gets in `setup`: its config, deps, logger, HTTP scope, hooks. */
export interface PluginContext<C, D extends DepsMap, R extends readonly SectionName[] = readonly SectionName[]> {
  /** The plugin's name, used for its logger and its hook taps. */
  readonly name: string;
  /** The plugin's own validated config subtree. */
  readonly config: C;
  /**
   * The other sections of the active configuration this plugin declared in `reads`, read-only
   * (frozen copies). There is no access to the whole configuration: what a plugin depends on is
   * visible in its definition.
   */
  readonly sections: ReadSections<R>;
  /** The resolved services named in `deps`. */
  readonly deps: ResolvedDeps<D>;
  /** A child logger with `component` set to the plugin's name. */
  readonly log: Logger;
  /** The plugin's encapsulated fastify scope. Routes are protected unless `config: PUBLIC`. */
  readonly http: HttpScope;
  readonly hooks: PluginHooks;
  /** Offers a service to other plugins and the core. */
  provide<T>(ref: ServiceRef<T, boolean>, impl: T): void;
  /**
   * Runs on close after every `onShutdown`, in reverse order of registration, once (a second
   * close does nothing); every resource acquired in setup belongs here.
   */
  onClose(fn: () => void | Promise<void>): void;
  /**
   * State that survives a config reload of the same service (not a restart of the program),
   * created once per key, e.g. the memory filesystem's files.
   */
  retain<T>(key: string, create: () => T): T;
  /**
   * A resource kept across config reloads while the settings it was opened with are unchanged
   * (since SDK 3.2.0): a listener and its live connections, a host process. Resolves with the
   * resource the previous app kept under `key` when `settings` are deep-equal to its own (not
   * opened again; the plugin re-binds it to this app: hooks, services, logger, the settings that
   * need no rebind), else closes that one first (its port is free again) and opens a new one.
   * `close` runs when the app closes (as an `onClose` registered now would), except during a
   * reload: then the resource waits for the next app, which claims it or, when it does not
   * (plugin turned off), the service closes it once the reload is done.
   *
   * @example
   * const server = await ctx.keep({
   *   key: 'listener', settings: { address: cfg.address },
   *   open: () => Listener.open(cfg.address), close: (l) => l.close(),
   * });
   * server.bind({ hooks: ctx.hooks.get(ingestHooksRef), log: ctx.log, token: cfg.token });
   */
  keep<T>(o: KeepOptions<T>): Promise<T>;
  /** Folder for the plugin's own persistent files (below `db.dir`). */
  readonly dataDir: string;
  /**
   * Lifecycle, after `setup`: `onReady` runs once every plugin is mounted (every placeholder,
   * filesystem and service exists), in mount order, before the listener is bound; a failure
   * stops the boot. The process engine restores its stored processes here.
   */
  onReady(fn: () => void | Promise<void>): void;
  /** Runs once the HTTP listener is bound (again after a reload), with its port; a failure is logged. */
  onListen(fn: (port: number) => void | Promise<void>): void;
  /**
   * Runs first when the app stops (SIGTERM, reload), in reverse mount order and before any
   * `onClose`: stop work that uses other plugins while they still serve (the process engine
   * stops its ffmpeg children here, which still write to memfs).
   */
  onShutdown(fn: () => void | Promise<void>): void;
  /** Persistent JSON documents of this plugin (atomic, coalesced writes); see `PluginState`. */
  readonly state: PluginState;
}

/** What `ctx.keep` keeps: see `PluginContext.keep`. */
export interface KeepOptions<T> {
  /** Unique within the plugin. */
  readonly key: string;
  /** Plain data (JSON-like): the settings the resource cannot change while open (a listen address). */
  readonly settings: unknown;
  open(): Promise<T>;
  /** Ends the resource and everything it holds (its sessions' end hooks fire). */
  close(resource: T): Promise<void>;
  /**
   * The ports the resource holds, each with the config key of its address: a reload whose config
   * gives one of them to another key's listener (the API moved onto RTMP's port) closes the resource
   * first, whatever its settings.
   */
  holds?(resource: T): ReadonlyArray<{ readonly key: string; readonly proto: 'tcp' | 'udp'; readonly port: number }>;
}

/** A plugin definition; pure data, no side effects at import time. */
export interface PluginDefinition<
  S extends TSchema | undefined = TSchema | undefined, D extends DepsMap = DepsMap, R extends readonly SectionName[] = readonly SectionName[],
> {
  readonly name: string;
  /**
   * The SDK versions this plugin works with, a semver range (`'^1.0.0'`); the loader refuses to
   * boot it under an SDK outside the range. A plugin package may say the same in its
   * `peerDependencies` on `@media-core/sdk`; this field wins when both are given.
   */
  readonly sdkVersion?: string;
  /**
   * Dotted path of a built-in's section in the configuration (e.g. `rtmp`, `storage.memory`): its
   * `configSchema` is composed into the whole configuration there (app/config-data.ts is
   * generated from the built-ins' definitions). A vendor plugin has none: its settings come from
   * its `plugins` entry.
   */
  readonly configKey?: string;
  /** TypeBox schema of the plugin's settings (kept in its folder, `schema.ts`): validation, defaults, docs and `ctx.config`'s type. */
  readonly configSchema?: S;
  /**
   * The boolean key that turns the plugin's service on (e.g. `'rtmp.enable'`): setting it to true
   * while the plugin is not loaded is a configuration error naming the plugin (409 on
   * `PUT /api/v3/config`, a stopped boot).
   */
  readonly enableKey?: string;
  /**
   * Cross-field and value rules of the plugin's section (what a schema cannot say), run on every
   * config load, `PUT /api/v3/config` and reload, also when the plugin is not loaded. `section` is
   * the subtree at `sectionKey` (default `configKey`; for a vendor plugin its `plugins` entry
   * settings), `whole` the whole configuration. Return errors keyed by dotted path relative to the
   * section (`''` = the section itself); the core prefixes them and answers 409 / stops the boot.
   *
   * @example
   * validate: (s) => (s.enable && s.min_port >= s.max_port ? { min_port: ['must be smaller than max_port'] } : {}),
   */
  readonly validate?: (section: S extends TSchema ? Static<S> : unknown, whole: Readonly<KernelConfig>) => ConfigErrors;
  /**
   * The configuration section `validate` checks when it is not `configKey`: the auth plugin owns
   * `api.auth` but takes its own tuning from its `plugins` entry.
   */
  readonly sectionKey?: string;
  /** Other top-level sections `setup` reads, e.g. `['storage', 'db']`; handed in as `ctx.sections`. */
  readonly reads?: R;
  readonly deps?: D;
  /** Refs this plugin provides; the kernel orders providers before consumers. */
  readonly provides?: readonly ServiceRef<unknown, boolean>[];
  /**
   * State documents kept at the top of `db.dir` (`<db.dir>/<doc>.json`) instead of the plugin's
   * folder, for layouts other programs know: the process engine declares `['db']`. Two plugins
   * cannot claim the same name; `config` is the kernel's.
   */
  readonly rootState?: readonly string[];
  /**
   * The event types this plugin emits (`eventsRef`): the catalogue (`GET /api/v3/events/types`,
   * the table in CONTRIBUTING.md) lists them under the plugin's name, whether it is loaded or not
   * for a built-in. A type two plugins emit (`fs.full`) is declared by both.
   */
  readonly events?: readonly EventTypeDeclaration[];
  setup(ctx: PluginContext<S extends TSchema ? Static<S> : undefined, D, R>): void | Promise<void>;
}

/**
 * Declares a plugin. `setup` builds it; the lifecycle taps say when the rest happens. The
 * process engine (core/process/plugin.ts) is the worked example: it opens its `db` document in
 * setup, restores in `onReady`, starts processes in `onListen`, stops them in `onShutdown`.
 *
 * @example
 * export default definePlugin({
 *   name: 'hello',
 *   deps: { fs: filesystemsRef },
 *   reads: ['storage'],
 *   async setup(ctx) {
 *     const doc = await ctx.state.open('hello', { init: () => ({ greeted: 0 }) });
 *     ctx.onReady(() => ctx.log.info({ filesystems: ctx.deps.fs.length }, 'all plugins mounted'));
 *     ctx.onListen((port) => ctx.log.info({ port }, 'listening'));
 *     ctx.http.get('/api/v3/hello', async () => {
 *       doc.data.greeted++;
 *       await doc.save();
 *       return { greeted: doc.data.greeted };
 *     });
 *   },
 * });
 */
export function definePlugin<S extends TSchema | undefined = undefined, D extends DepsMap = {}, const R extends readonly SectionName[] = []>(
  def: PluginDefinition<S, D, R>,
): PluginDefinition<S, D, R> {
  return Object.freeze(def);
}
