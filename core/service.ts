import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { BootError, type ConfigData } from '../sdk/index.ts';
import { deepEqual } from './config/schema-walk.ts';
import { pluginCode } from './kernel/loader.ts';
import { buildApp, type App } from './app.ts';
import { loadConfig, resolveConfigPath } from './config/load.ts';
import { ConfigStore } from './config/store.ts';
import { HttpsListener } from './http/https-listener.ts';
import { ServingThreadPool } from './http/threads/pool.ts';
import { servingThreadCount } from './http/threads/count.ts';
import { listenAddress } from './http/listen-address.ts';
import { semanticErrors, typeErrors } from './config/validate.ts';

export interface ServiceOptions {
  argv?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Config file path; overrides argv and CORE_CONFIGFILE. */
  configPath?: string;
  stdoutLog?: boolean;
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
  #reloading: Promise<void> | undefined;
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

  async #build(): Promise<App> {
    const loaded = await loadConfig(this.configPath, this.env);
    const errs = { ...loaded.env.errors, ...typeErrors(loaded.active) };
    if (Object.keys(errs).length) {
      throw new BootError(`invalid configuration (${loaded.path}):\n${Object.entries(errs).map(([k, m]) => `  ${k}: ${m.join('; ')}`).join('\n')}`);
    }
    const app = await buildApp(loaded.active, {
      configStore: new ConfigStore(loaded, this.env),
      env: this.env,
      retained: this.#retained,
      stdoutLog: this.#opts.stdoutLog,
      requestReload: () => { void this.reload(); },
      threads: this.threads,
      started: this.#started?.loaded,
    });
    this.#started ??= { entries: structuredClone(loaded.active.plugins), loaded: app.loaded };
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
    await this.app.http.listen({ host, port: port === 0 && reusePort ? reusePort : port, reusePort: threads > 0 } as { host: string; port: number });
    this.port = (this.app.http.server.address() as AddressInfo).port;
    const k = this.app.kernel;
    if (threads > 0) await serveThreads();
    await this.#https.attach({ http: this.app.http, config: k.config, services: k.services, log: k.log }, reuseHttpsPort, threads > 0);
    await this.app.listening(this.port);
  }

  /** Rebuilds the app from the stored config. An invalid stored config leaves the running app alone. */
  reload(): Promise<void> {
    this.#reloading ??= this.#reload().finally(() => { this.#reloading = undefined; });
    return this.#reloading;
  }

  async #reload(): Promise<void> {
    if (this.#closed) return;
    const log = this.app.kernel.log;
    try {
      const loaded = await loadConfig(this.configPath, this.env);
      if (this.#started && !deepEqual(pluginCode(loaded.active.plugins), pluginCode(this.#started.entries))) {
        log.error({ plugins: loaded.active.plugins }, 'reload refused: plugins changed in the config file; they are loaded at the next start of the service');
        return;
      }
      const errs = { ...loaded.env.errors, ...typeErrors(loaded.active), ...(await semanticErrors(loaded.active, dirname(loaded.path), this.#started?.loaded)) };
      if (Object.keys(errs).length) {
        log.error({ errors: errs }, 'reload refused: the stored config is invalid');
        return;
      }
    } catch (err) {
      log.error({ err }, 'reload refused');
      return;
    }
    log.info('reloading');
    const oldPort = this.port;
    const oldHttpsPort = this.httpsPort;
    // the HTTPS listener stays open (503 meanwhile) and takes the new app and certificate
    this.#https.detach();
    await this.app.close();
    try {
      this.app = await this.#build();
    } catch (err) {
      log.error({ err }, 'reload failed');
      throw err;
    }
    await this.#listen(oldPort, oldHttpsPort);
  }

  /** Stops everything (children, listeners); state is already on disk. Safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#reloading?.catch(() => {});
    await this.threads.close();
    await this.#https.close();
    await this.app.close();
  }
}
