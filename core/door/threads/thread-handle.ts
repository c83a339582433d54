import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { ThreadTraffic } from './module.ts';
import type { DoorStart, FromWorker, ToWorker, WorkerInit, WorkerTls } from './messages.ts';
import type { ListenerBounds } from '../../http/listener-bounds.ts';
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

/** The door as a thread gets it, without its channel (each start opens one). */
export type DoorSpec = Omit<DoorStart, 'port'>;

/**
 * One serving thread slot: its current worker, and its replacement when the worker dies. The
 * init (and the door's snapshot) are taken at each start, so a replacement starts from the
 * state of that moment; broadcasts posted meanwhile went nowhere and are in that snapshot.
 */
export class ThreadHandle {
  readonly index: number;
  generation = 0;
  readonly #init: () => Omit<WorkerInit, 'door'> & { door?: DoorSpec };
  /** Main's end of the door's channel to the current worker. */
  #port: MessagePort | undefined;
  readonly #log: ThreadLog;
  #worker: Worker | undefined;
  #stopping = false;
  #startedAt = 0;
  #retry: NodeJS.Timeout | undefined;
  #statsId = 0;
  readonly #statsWaiters = new Map<number, (s: { served: number; forwarded: number }) => void>();

  readonly #fromDoor: (message: unknown) => void;
  readonly #onTraffic: (peers: ThreadTraffic[]) => void;

  /** `fromDoor` gets what the thread's door sends, `onTraffic` the thread's socket bytes. */
  constructor(
    index: number, init: () => Omit<WorkerInit, 'door'> & { door?: DoorSpec }, log: ThreadLog,
    fromDoor: (message: unknown) => void, onTraffic: (peers: ThreadTraffic[]) => void,
  ) {
    this.index = index;
    this.#onTraffic = onTraffic;
    this.#fromDoor = fromDoor;
    this.#init = init;
    this.#log = log;
  }

  /** Resolves once the thread listens (or failed: it is then retried). */
  start(): Promise<void> {
    this.generation++;
    this.#startedAt = Date.now();
    this.#closePort();
    const init = this.#init();
    const door = init.door && this.#open(init.door);
    const w = new Worker(WORKER_URL, {
      workerData: { ...init, door } satisfies WorkerInit, transferList: door ? [door.port] : [], resourceLimits: THREAD_RESOURCE_LIMITS,
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
        this.#closePort();
        for (const done of this.#statsWaiters.values()) done({ served: 0, forwarded: 0 });
        this.#statsWaiters.clear();
        if (this.#stopping) return;
        const wait = Date.now() - this.#startedAt < SHORT_LIFE_MS ? 1_000 : 0;
        this.#log.warn({ thread: this.index, code, retryMs: wait }, 'serving thread died; starting a new one');
        this.#retry = setTimeout(() => { this.#retry = undefined; if (!this.#stopping) void this.start(); }, wait);
      });
    });
  }

  /** The door's channel to this thread; main keeps one end (broadcasts), the thread gets the other. */
  #open(d: DoorSpec): DoorStart {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (message) => this.#fromDoor(message));
    // the port never keeps the process alive: the thread does, until it is stopped
    port1.unref();
    this.#port = port1;
    return { ...d, port: port2 };
  }

  #closePort(): void {
    this.#port?.close();
    this.#port = undefined;
  }

  /** Serves with the door of the app that listens now (undefined: none, its app closed). */
  setDoor(d: DoorSpec | undefined): void {
    const w = this.#worker;
    this.#closePort();
    if (!w) return;
    if (!d) {
      w.postMessage({ t: 'drop' } satisfies ToWorker);
      return;
    }
    const start = this.#open(d);
    w.postMessage({ t: 'door', ...start } satisfies ToWorker, [start.port]);
  }

  /** A broadcast of the door (nowhere while the thread restarts: its snapshot covers it). */
  send(data: unknown): void {
    this.#port?.postMessage(data);
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
