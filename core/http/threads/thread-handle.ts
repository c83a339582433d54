import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ThreadTraffic } from './module.ts';
import type { FromWorker, ModuleSpec, ModuleStart, ToWorker, WorkerInit, WorkerTls } from './messages.ts';
import type { ListenerBounds } from '../listener-bounds.ts';
import { siblingModule } from '../../../sdk/module-url.ts';

/** What the pool logs with (the current app's logger). */
export interface ThreadLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const WORKER_URL = new URL(siblingModule('./worker.ts', import.meta.url));
/** A thread that dies this soon after its start waits before the next try (no crash loop at full speed). */
const SHORT_LIFE_MS = 2_000;
const START_TIMEOUT_MS = 30_000;
/**
 * Each thread's V8 limits (issue 29): a small young generation. V8's default grows under load and
 * stays grown (a thread's heap 84-90 MiB after bench/memfs/thread-memory.ts's load, 24-27 MiB with
 * 4, at 3-4 MiB less idle); the old generation keeps its default.
 */
export const THREAD_RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 4 } as const;

/**
 * One serving thread slot: its current worker, and its replacement when the worker dies. The
 * init (and the modules' snapshots) are taken at each start, so a replacement starts from the
 * state of that moment; broadcasts posted meanwhile went nowhere and are in that snapshot.
 */
export class ThreadHandle {
  readonly index: number;
  generation = 0;
  readonly #init: () => Omit<WorkerInit, 'modules'> & { modules: ModuleSpec[] };
  /** Main's end of each module's channel to the current worker. */
  readonly #ports = new Map<string, MessagePort>();
  readonly #log: ThreadLog;
  #worker: Worker | undefined;
  #stopping = false;
  #startedAt = 0;
  #retry: NodeJS.Timeout | undefined;
  #statsId = 0;
  readonly #statsWaiters = new Map<number, (s: { served: number; forwarded: number }) => void>();

  readonly #fromModule: (name: string, message: unknown) => void;
  readonly #onTraffic: (peers: ThreadTraffic[]) => void;

  /** `fromModule` gets what a module's thread side sends, `onTraffic` the thread's socket bytes. */
  constructor(
    index: number, init: () => Omit<WorkerInit, 'modules'> & { modules: ModuleSpec[] }, log: ThreadLog,
    fromModule: (name: string, message: unknown) => void, onTraffic: (peers: ThreadTraffic[]) => void,
  ) {
    this.index = index;
    this.#onTraffic = onTraffic;
    this.#fromModule = fromModule;
    this.#init = init;
    this.#log = log;
  }

  /** Resolves once the thread listens and loaded its modules (or failed: it is then retried). */
  start(): Promise<void> {
    this.generation++;
    this.#startedAt = Date.now();
    for (const p of this.#ports.values()) p.close();
    this.#ports.clear();
    const init = this.#init();
    const modules = init.modules.map((m) => this.#open(m));
    const w = new Worker(WORKER_URL, {
      workerData: { ...init, modules } satisfies WorkerInit, transferList: modules.map((m) => m.port), resourceLimits: THREAD_RESOURCE_LIMITS,
    });
    this.#worker = w;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, START_TIMEOUT_MS);
      w.on('message', (m: FromWorker) => {
        if (m.t === 'ready') { clearTimeout(timer); resolve(); }
        else if (m.t === 'error') this.#log.error({ thread: this.index, err: m.message }, 'serving thread error');
        else if (m.t === 'traffic') this.#onTraffic(m.peers);
        else if (m.t === 'stats') { this.#statsWaiters.get(m.id)?.({ served: m.served, forwarded: m.forwarded }); this.#statsWaiters.delete(m.id); }
      });
      w.on('error', (err) => this.#log.error({ thread: this.index, err: err.message }, 'serving thread failed'));
      w.on('exit', (code) => {
        clearTimeout(timer);
        resolve();
        if (this.#worker !== w) return;
        this.#worker = undefined;
        for (const p of this.#ports.values()) p.close();
        this.#ports.clear();
        for (const done of this.#statsWaiters.values()) done({ served: 0, forwarded: 0 });
        this.#statsWaiters.clear();
        if (this.#stopping) return;
        const wait = Date.now() - this.#startedAt < SHORT_LIFE_MS ? 1_000 : 0;
        this.#log.warn({ thread: this.index, code, retryMs: wait }, 'serving thread died; starting a new one');
        this.#retry = setTimeout(() => { this.#retry = undefined; if (!this.#stopping) void this.start(); }, wait);
      });
    });
  }

  /** A channel for `m` to this thread; main keeps one end (broadcasts), the thread gets the other. */
  #open(m: ModuleSpec): ModuleStart {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (message) => this.#fromModule(m.name, message));
    // the port never keeps the process alive: the thread does, until it is stopped
    port1.unref();
    this.#ports.set(m.name, port1);
    return { ...m, port: port2 };
  }

  /** Starts a module in the running thread (a plugin registered it after the thread started). */
  addModule(m: ModuleSpec): void {
    const w = this.#worker;
    if (!w) return;
    this.#ports.get(m.name)?.close();
    const start = this.#open(m);
    w.postMessage({ t: 'module', ...start } satisfies ToWorker, [start.port]);
  }

  dropModule(name: string): void {
    this.#ports.get(name)?.close();
    this.#ports.delete(name);
    this.#worker?.postMessage({ t: 'drop', name } satisfies ToWorker);
  }

  /** A broadcast of module `name` (nowhere while the thread restarts: its snapshot covers it). */
  send(name: string, data: unknown): void {
    this.#ports.get(name)?.postMessage(data);
  }

  /** The HTTPS port and certificate (nowhere while the thread restarts: its init has them). */
  setTls(tls: WorkerTls | undefined): void {
    this.#worker?.postMessage({ t: 'tls', tls } satisfies ToWorker);
  }

  /** New bounds (nowhere while the thread restarts: its init has them). */
  setBounds(bounds: ListenerBounds): void {
    this.#worker?.postMessage({ t: 'bounds', bounds } satisfies ToWorker);
  }

  stats(): Promise<{ served: number; forwarded: number }> {
    const w = this.#worker;
    if (!w) return Promise.resolve({ served: 0, forwarded: 0 });
    const id = ++this.#statsId;
    return new Promise((resolve) => {
      this.#statsWaiters.set(id, resolve);
      w.postMessage({ t: 'stats', id } satisfies ToWorker);
    });
  }

  /** Ends the worker as a crash would (test hook); the exit handler replaces it. */
  async crash(): Promise<void> {
    await this.#worker?.terminate();
  }

  /** Closes the thread's listener and connections, then ends it (terminated after 5 s). */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#retry);
    const w = this.#worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage({ t: 'close' } satisfies ToWorker);
    const timer = setTimeout(() => { void w.terminate(); }, 5_000);
    await exited;
    clearTimeout(timer);
  }
}
