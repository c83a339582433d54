import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { BootError, writeFileAtomic, type ConfigErrors } from '../sdk/index.ts';
import type { ConfigData } from './config/config-data.ts';
import { deepEqual } from './config/schema-walk.ts';
import { pluginCode, type ModuleImporter } from './kernel/loader.ts';
import { planBoot } from './kernel/plan.ts';
import { buildApp, type App } from './app.ts';
import { loadConfig, persistLoaded, resolveConfigPath, type LoadedConfig } from './config/load.ts';
import { applyErrors } from './config/apply-checks.ts';
import { heldPorts } from './config/held-ports.ts';
import { listenersOf, type KeptPorts } from './config/listeners.ts';
import { releaseMemoryAfterReload } from './reload-memory.ts';
import { KeptResources } from './kernel/keep.ts';
import { ConfigStore } from './config/store.ts';
import { HttpsListener } from './http/https-listener.ts';
import { ServingThreadPool } from './door/threads/pool.ts';
import { servingThreadCount } from './door/threads/count.ts';
import { listenAddress } from './http/listen-address.ts';
import { semanticErrors, typeErrors } from './config/validate.ts';

export interface ServiceOptions {
  argv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Config file path; overrides argv and CORE_CONFIGFILE. */
  configPath?: string;
  stdoutLog?: boolean;
  /** A reload failed and so did its rollback: the service has no app (the CLI exits; the file boots). */
  onFatal?: (err: Error) => void;
  /** How plugin modules are imported (default `import()`): a test counts that a boot imports each once. */
  importModule?: ModuleImporter;
}

/**
 * A running service: config file + app + listener. It survives reloads: the app is rebuilt
 * from the stored config in-process and listens on the same port again.
 */
export class CoreService {
  app!: App;
  port = 0;
  /** The HTTP listener was narrowed to 127.0.0.1: no host in `address` and API auth off. */
  loopbackOnly = false;
  /** Serving threads (`http.threads`): they hold the port across reloads, like the HTTPS listener. */
  readonly threads = new ServingThreadPool();
  /** Beside threads it shares its port and certificate with them (they take TLS clients too). */
  readonly #https = new HttpsListener((tls) => this.threads.shareTls(tls));
  readonly #opts: ServiceOptions;
  readonly #retained = new Map<string, unknown>();
  /** Listeners, host processes and connections kept across reloads (`ctx.keep`, the stream table). */
  readonly #resources = new KeptResources();
  #reloading: Promise<ConfigErrors | undefined> | undefined;
  /** The config file's text the running app booted from: what a failed reload writes back. */
  #booted: string | undefined;
  #closed = false;
  /** What the process loaded at its start: its `plugins` list and the modules (a reload imports nothing). */
  #started: { entries: ConfigData['plugins']; loaded: App['loaded'] } | undefined;

  private constructor(opts: ServiceOptions) {
    this.#opts = opts;
  }

  static async start(opts: ServiceOptions = {}): Promise<CoreService> {
    const s = new CoreService(opts);
    s.app = await s.#build();
    try {
      await s.#listen();
    } catch (err) {
      // a busy port: what was built and bound is closed again
      await s.close();
      throw new BootError(`cannot listen: ${(err as Error).message}`, { cause: err });
    }
    return s;
  }

  get env(): NodeJS.ProcessEnv { return this.#opts.env ?? process.env; }
  get configPath(): string {
    return this.#opts.configPath ?? resolveConfigPath(this.#opts.argv ?? process.argv.slice(2), this.env);
  }
  get url(): string { return `http://127.0.0.1:${this.port}`; }
  /** The HTTPS port (`tls.address`), 0 when TLS is off. */
  get httpsPort(): number { return this.#https.port; }
  get httpsUrl(): string | undefined { return this.httpsPort ? `https://127.0.0.1:${this.httpsPort}` : undefined; }

  async #build(loaded?: LoadedConfig): Promise<App> {
    loaded ??= await loadConfig(this.configPath, this.env);
    const errs = { ...loaded.env.errors, ...typeErrors(loaded.active) };
    // values of the wrong form only: the value rules run as well, so the message names every error
    if (Object.keys(errs).length && !Object.keys(typeErrors(loaded.active, { formats: false })).length) {
      for (const [k, m] of Object.entries(await semanticErrors(loaded.active))) (errs[k] ??= []).push(...m);
    }
    if (Object.keys(errs).length) {
      throw new BootError(`invalid configuration (${loaded.path}):\n${Object.entries(errs).map(([k, m]) => `  ${k}: ${m.join('; ')}`).join('\n')}`);
    }
    // the one plan of this boot: validated, plugins loaded (imported at the start only), graph ordered
    const plan = await planBoot(loaded.active, { configPath: loaded.path, started: this.#started?.loaded, importModule: this.#opts.importModule });
    const app = await buildApp(plan, {
      configStore: new ConfigStore(loaded, this.env, () => this.#kept()),
      env: this.env,
      retained: this.#retained,
      kept: this.#resources,
      stdoutLog: this.#opts.stdoutLog,
      requestReload: () => { this.reload().catch((err: Error) => this.#fatal(err)); },
      checkReload: () => this.checkReload(),
      threads: this.threads,
    });
    this.#started ??= { entries: structuredClone(loaded.active.plugins), loaded: app.loaded };
    // the file is completed (generated values, defaults) only by a config that boots
    try {
      await persistLoaded(loaded);
    } catch (err) {
      await app.close().catch(() => {});
      throw new BootError(`cannot write config file ${loaded.path}: ${(err as Error).message}`, { cause: err });
    }
    this.#booted = loaded.text;
    return app;
  }

  async #listen(reusePort?: number, reuseHttpsPort?: number): Promise<void> {
    const { host, port, loopbackOnly } = listenAddress(this.app.kernel.config.address, this.app.kernel.config);
    this.loopbackOnly = loopbackOnly;
    const threads = servingThreadCount(this.app.kernel.config.http.threads);
    const serveThreads = () => this.threads.serve({ host, port: this.port, count: threads, server: this.app.http.server, log: this.app.kernel.log });
    // threads turned off: theirs are the port's other sockets, and main now binds it without reusePort
    if (threads === 0) await serveThreads();
    // reusePort only with threads (they bind the same port, the kernel spreads connections); without,
    // a second service started on a busy port must fail as before instead of sharing it
    // (fastify hands its options to node's listen whole; its types lack the key)
    const bind = { host, port: port === 0 && reusePort ? reusePort : port, reusePort: threads > 0 };
    // the service's listener: bound once, kept by every reload that leaves its address (fastify never binds it)
    if (this.app.listener) {
      this.app.listener.activate();
      await this.app.listener.listen(bind);
    }
    else await this.app.http.listen(bind as { host: string; port: number });
    this.port = (this.app.http.server.address() as AddressInfo).port;
    const k = this.app.kernel;
    if (threads > 0) await serveThreads();
    await this.#https.attach({ http: this.app.http, config: k.config, services: k.services, log: k.log }, reuseHttpsPort, threads > 0);
    await this.app.listening(this.port);
  }

  /**
   * Rebuilds the app from the stored config. A config that would not boot (checkReload) is refused;
   * one that fails anyway while it is applied is rolled back: the file the running app booted from
   * is written back (atomically) and the app is built from it again, on the same ports. Resolves
   * with the refusal or failure (also logged), or undefined when the new config runs. Rejects only
   * when the rollback fails too (then the service has no app; the CLI exits, the file is bootable).
   */
  reload(): Promise<ConfigErrors | undefined> {
    this.#reloading ??= this.#reload().finally(() => { this.#reloading = undefined; });
    return this.#reloading;
  }

  /** What a reload would refuse; a refusal writes the running app's config back to the file. */
  async checkReload(): Promise<ConfigErrors | undefined> {
    const { errors, keepFile } = await this.#preflight();
    if (errors) await this.#refused(errors, keepFile);
    return errors;
  }

  async #preflight(): Promise<{ loaded?: LoadedConfig; errors?: ConfigErrors; keepFile?: boolean }> {
    let loaded: LoadedConfig;
    try {
      loaded = await loadConfig(this.configPath, this.env);
    } catch (err) {
      return { errors: { '(config file)': [(err as Error).message] } };
    }
    // plugins are loaded at a start only (issue 26): a changed list waits for the next start, and the
    // operator's file stays as written (it boots; it is not this reload's to undo)
    if (this.#started && !deepEqual(pluginCode(loaded.active.plugins), pluginCode(this.#started.entries))) {
      return { loaded, errors: { plugins: ['changed in the config file: plugins are loaded at the next start of the service'] }, keepFile: true };
    }
    const errs: ConfigErrors = { ...loaded.env.errors, ...typeErrors(loaded.active) };
    if (!Object.keys(errs).length) Object.assign(errs, await semanticErrors(loaded.active, this.#started?.loaded));
    if (!Object.keys(errs).length) Object.assign(errs, await applyErrors(loaded.active, await heldPorts(this.app.kernel.config, this.#kept()), loaded.path, this.#kept()));
    return Object.keys(errs).length ? { loaded, errors: errs } : { loaded };
  }

  async #refused(errors: ConfigErrors, keepFile = false): Promise<void> {
    if (keepFile) {
      this.app.kernel.log.error({ errors }, 'reload refused: plugins changed in the config file; they are loaded at the next start of the service');
      return;
    }
    this.app.kernel.log.error({ errors }, 'reload refused: the stored config would not boot; the running one stays (and is stored again)');
    await this.#restoreBooted();
  }

  /**
   * Puts the text the running app booted from back into the config file, atomically; what was
   * there goes to `<file>.rejected` for the operator.
   */
  async #restoreBooted(): Promise<void> {
    const path = this.configPath;
    if (this.#booted === undefined) return;
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current === this.#booted) return;
    if (current !== undefined) await writeFileAtomic(`${path}.rejected`, current).catch(() => {});
    await writeFileAtomic(path, this.#booted);
  }

  async #reload(): Promise<ConfigErrors | undefined> {
    if (this.#closed) return undefined;
    const { loaded, errors, keepFile } = await this.#preflight();
    if (errors || !loaded) {
      await this.#refused(errors ?? {}, keepFile);
      return errors;
    }
    const log = this.app.kernel.log;
    log.info('reloading');
    const ports = { http: this.port, https: this.httpsPort };
    await this.#releaseMoved(loaded.active);
    // the HTTPS listener stays open (503 meanwhile) and takes the new app and certificate
    this.#https.detach();
    // what the plugins keep (ctx.keep) waits for the new app, which claims it or not
    this.#resources.park();
    await this.app.close();
    try {
      // a kept listener whose port the new config gives to another listener goes before anything binds
      await this.#resources.displace(listenersOf(loaded.active, this.#kept()), log);
      this.app = await this.#build(loaded);
      await this.#listen(ports.http, ports.https);
    } catch (err) {
      log.error({ err }, 'reload failed: going back to the config the service ran with');
      await this.#rollback(ports);
      this.app.kernel.log.error({ err: (err as Error).message }, 'reload failed; the previous config runs again and is stored again');
      return { '(reload)': [(err as Error).message] };
    } finally {
      // what no app claimed (a plugin turned off) goes now
      await this.#resources.settle(this.app.kernel.log);
      releaseMemoryAfterReload();
    }
    return undefined;
  }

  /**
   * Listeners the service keeps across reloads (serving threads on the API port, HTTPS) are
   * closed before the new app binds when its config moves them, so no new listener finds its
   * port still held by this very service (RTMP on the old API port, ...).
   */
  async #releaseMoved(next: ConfigData): Promise<void> {
    const cur = this.app.kernel.config;
    const a = listenAddress(cur.address, cur);
    const b = listenAddress(next.address, next);
    if (a.host !== b.host || a.port !== b.port) await this.threads.close();
    if (!next.tls.enable || next.tls.address !== cur.tls.address) await this.#https.close();
  }

  /** The failed app goes; the booted file is stored again and the app built from it, on the same ports. */
  async #rollback(ports: { http: number; https: number }): Promise<void> {
    this.#https.detach();
    await this.app.close().catch(() => {});
    await this.#restoreBooted();
    this.app = await this.#build();
    await this.#listen(ports.http, ports.https);
  }

  /** The API ports a reload binds again where the config says port 0. */
  #kept(): KeptPorts {
    return { http: this.port || undefined, https: this.httpsPort || undefined };
  }

  #fatal(err: Error): void {
    process.stderr.write(`reload failed and the previous config could not be started again: ${err.message}\n`);
    this.#opts.onFatal?.(err);
  }

  /** Stops everything (children, listeners); state is already on disk. Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#reloading?.catch(() => {});
    await this.threads.close();
    await this.#https.close();
    await this.app.close();
    // nothing is left here unless a reload's rollback failed (the app then is the one that failed)
    await this.#resources.closeAll(this.app.kernel.log);
  }
}
