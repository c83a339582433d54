/**
 * The test kit (`@media-core/testkit`): the real app built in-process with the plugins a
 * test chooses and stand-ins for services, called with `inject` (no port, no TCP; no ffmpeg
 * unless the test starts a process). It builds exactly what the service builds (config file
 * with generated secrets, validation, plugin graph, lifecycle) and listens only when an
 * end-to-end test asks it to (`listen()`).
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { AnyServiceRef, PluginDefinition, PluginEntry, ServiceRef } from '@media-core/sdk';
import { buildApp, type App } from '@media-core/core/app';
import { loadConfig } from '@media-core/core/config/load';
import { ConfigStore } from '@media-core/core/config/store';
import { deepMerge } from '@media-core/core/config/schema-walk';
import { installBuild, type CoreBuild } from '@media-core/core/config/build';
import { frontOf } from '@media-core/core/door/install';
import { toResponse, type KitRequest, type KitResponse } from './request.ts';
import lightInject from 'light-my-request';

export type { KitRequest, KitResponse } from './request.ts';

/** A plugin to mount: a `plugins` entry (name, path, package) or a definition, with its settings. */
export type TestPlugin = PluginEntry | PluginDefinition | { plugin: PluginDefinition; config?: unknown };

export interface TestAppOptions {
  /** The plugins besides the always-mounted process engine (default: `config.plugins`, else none). */
  plugins?: readonly TestPlugin[];
  /** Merged over the kit's defaults (temp `db.dir` and `storage.disk.dir`, log kept in memory). */
  config?: Record<string, unknown>;
  /** Services provided before the plugins mount; they win over a plugin's own. See `override`. */
  overrides?: readonly { ref: AnyServiceRef; impl: unknown }[];
  /** Environment (default: this process's without `CORE_*` variables). */
  env?: NodeJS.ProcessEnv;
  /** Folder relative plugin paths and packages are found from (default the working directory). */
  baseDir?: string;
  /** A tap-like test: the app is closed at its teardown. */
  t?: { teardown(fn: () => unknown): void };
  /**
   * The built-ins and config shape the core runs with (default: `@media-core/app`'s, the service's
   * own, when that package is installed; else the build installed in the core, the core alone by default).
   */
  build?: CoreBuild;
}

export interface TestApp {
  readonly app: App;
  /** The temp folder with config.json, db/ and disk/ (removed by `close`). */
  readonly dir: string;
  /** fastify's inject: a request without a socket. */
  inject(opts: InjectOptions | string): Promise<LightMyRequestResponse>;
  /** The same with the JSON conveniences of the project's tests (body encoded, JSON decoded). */
  request(method: string, path: string, opts?: KitRequest): Promise<KitResponse>;
  /** The provided services, as plugins get them. */
  readonly services: { get<T, M extends boolean>(ref: ServiceRef<T, M>): M extends true ? readonly T[] : T };
  /** Runs the `onListen` taps as if bound to `port` (work that starts on listen, e.g. processes). */
  listening(port?: number): Promise<void>;
  /**
   * For end-to-end tests only (ffmpeg or another program connecting to the app): binds
   * 127.0.0.1 on a free port, runs the `onListen` taps with it, returns `http://127.0.0.1:<port>`.
   */
  listen(): Promise<string>;
  close(): Promise<void>;
}

/**
 * A stand-in for a service, for `overrides`.
 *
 * @example
 * const kit = await createTestApp({ plugins: [myPlugin], overrides: [override(processesRef, fakeProcesses)] });
 */
export function override<T>(ref: ServiceRef<T, boolean>, impl: T): { ref: AnyServiceRef; impl: unknown } {
  return { ref, impl };
}

/** The service's build, from `@media-core/app` when it is installed (the kit runs without it: the core alone). */
async function appBuild(): Promise<CoreBuild | undefined> {
  const name = '@media-core/app';
  try {
    return ((await import(name)) as { BUILD?: CoreBuild }).BUILD;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && (err as Error).message.includes(`'${name}'`)) return undefined;
    throw err;
  }
}

function isDefinition(p: unknown): p is PluginDefinition {
  return typeof p === 'object' && p !== null && typeof (p as PluginDefinition).setup === 'function';
}

/**
 * Builds the app in-process. Call `close()` (or pass `t`) when done.
 *
 * @example
 * const kit = await createTestApp({ t, plugins: ['memfs'], config: { storage: { memory: { auth: { enable: false } } } } });
 * const res = await kit.request('PUT', '/memfs/a.txt', { raw: 'hi' });
 * t.equal(res.status, 201);
 */
export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const build = opts.build ?? await appBuild();
  if (build) installBuild(build);
  const dir = await mkdtemp(join(tmpdir(), 'sdk-testing-'));
  const entries: PluginEntry[] = [];
  const defs: { def: PluginDefinition; entryConfig?: unknown }[] = [];
  for (const p of opts.plugins ?? []) {
    if (isDefinition(p)) defs.push({ def: p });
    else if (typeof p === 'object' && 'plugin' in p) defs.push({ def: p.plugin, entryConfig: p.config });
    else entries.push(p);
  }
  const configPath = join(dir, 'config.json');
  await mkdir(join(dir, 'disk'), { recursive: true });
  const base = { address: '127.0.0.1:0', db: { dir: join(dir, 'db') }, storage: { disk: { dir: join(dir, 'disk') } }, update_check: false };
  await writeFile(configPath, JSON.stringify({ ...deepMerge(base, opts.config ?? {}), plugins: opts.plugins ? entries : opts.config?.plugins ?? [] }));
  const env = opts.env ?? Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_')));
  let app: App;
  try {
    const loaded = await loadConfig(configPath, env);
    app = await buildApp(loaded.active, {
      configStore: new ConfigStore(loaded, env), env, plugins: defs, overrides: opts.overrides, pluginBase: opts.baseDir ?? process.cwd(),
    });
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  // a listening server keeps the event loop alive; without one, a request waiting only on an
  // unref'd timer (the login throttle's delay) would let the process exit mid-test
  const keepAlive = setInterval(() => {}, 60_000);
  let closed: Promise<void> | undefined;
  const kit: TestApp = {
    app,
    dir,
    inject: (o) => doorInject(app, o),
    request: async (method, path, r) => toResponse(await doorInject(app, requestOf(method, path, r))),
    services: { get: (ref) => app.kernel.services.resolve(ref) as never },
    listening: (port = 0) => app.listening(port),
    listen: async () => {
      await app.http.listen({ host: '127.0.0.1', port: 0 });
      const port = (app.http.server.address() as AddressInfo).port;
      await app.listening(port);
      return `http://127.0.0.1:${port}`;
    },
    close: () => (closed ??= app.close().finally(() => {
      clearInterval(keepAlive);
      return rm(dir, { recursive: true, force: true });
    })),
  };
  opts.t?.teardown(() => kit.close());
  return kit;
}

function requestOf(method: string, path: string, r: KitRequest = {}): InjectOptions {
  const headers: Record<string, string> = { ...(r.headers ?? {}) };
  let payload: InjectOptions['payload'] = r.raw as InjectOptions['payload'];
  // as fetch does: a string body is text unless the test says otherwise
  if (typeof r.raw === 'string' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'text/plain;charset=UTF-8';
  if (r.body !== undefined) {
    payload = JSON.stringify(r.body);
    headers['content-type'] ??= 'application/json';
  }
  if (r.token) headers.authorization = `Bearer ${r.token}`;
  return { method: method as InjectOptions['method'], url: path, headers, payload, remoteAddress: r.remoteAddress };
}

/** fastify's inject with the file door in front of the router, as on a listener. */
async function doorInject(app: App, o: InjectOptions | string): Promise<LightMyRequestResponse> {
  await app.http.ready();
  return lightInject(frontOf(app.http), o as never) as unknown as Promise<LightMyRequestResponse>;
}
