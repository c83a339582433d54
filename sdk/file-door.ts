import { createServiceRef } from './refs.ts';
import type { FsServeRefusal, FsServeRequest, FsServedEvent, FsWrittenEvent } from './fs-hooks.ts';

/*
 * The file door: the core's one code path that serves and stores the files of every public mount
 * (`/memfs`, `/`, a vendor's), run unchanged on the main thread and in every serving thread. A
 * plugin that must see file requests wherever they are answered (the sessions plugin counts HLS
 * viewers) puts taps into the door as a module: the core loads it next to every copy of the door,
 * main's included, and the module talks to its plugin over one channel. The plugin never learns
 * how many copies run, or where.
 */

/** What a door tap module gets wherever it runs. */
export interface FileDoorTapContext {
  /** The `init` the plugin gave (structured clone in a thread: SharedArrayBuffers stay shared; the same object on main). */
  readonly init: unknown;
  /**
   * Sends a message to the plugin's `onMessage` (in order per copy). On main it is delivered at
   * once, synchronously; from a thread, with the thread's next turn. Batch what is frequent.
   */
  send(message: unknown): void;
  /** Receives the plugin's `broadcast`s, in the order sent; one receiver per copy. */
  onMessage(fn: (message: unknown) => void): void;
}

/**
 * The taps of one copy of a module; each has the signature of the `fsServeHooksRef` hook of the
 * same name and is called at the same point of an answer, with the same arguments, wherever the
 * door runs.
 */
export interface FileDoorTaps {
  /** Before a GET/HEAD is answered: a refusal becomes the answer (its status and Error body). */
  preServe?(request: FsServeRequest): FsServeRefusal | undefined | void;
  /** Rewrites the body of an `.m3u8` about to be sent with status 200. */
  transformPlaylist?(body: string, request: FsServeRequest): string;
  /** After a GET/HEAD was answered. */
  onServed?(event: FsServedEvent): void;
  /** After an upload was stored (always on main: the store lives there). */
  onWritten?(event: FsWrittenEvent): void;
  /** The copy is dropped (the app closes, the thread ends). */
  close?(): void;
}

/** The default export of a door tap module. */
export type FileDoorTapFactory = (ctx: FileDoorTapContext) => FileDoorTaps;

/** A door tap module as a plugin registers it. */
export interface FileDoorTapModule {
  /** Unique per app, e.g. `sessions`. */
  name: string;
  /** URL of an ES module whose default export is a `FileDoorTapFactory` (`new URL('./door-tap.ts', import.meta.url).href`). */
  url: string;
  /** Given to every copy (keep it small; SharedArrayBuffers are shared, not copied). */
  init?: unknown;
}

/** The plugin's side of its tap module. */
export interface FileDoorChannel {
  /** Sends a message to every copy of the module (main's and the threads'), in order. */
  broadcast(message: unknown): void;
  /** Receives what the copies `send`; one receiver. */
  onMessage(fn: (message: unknown) => void): void;
  /** Drops the module from the door everywhere (done for you when the app closes). */
  close(): void;
}

/** The file door (provided by the core). */
export interface FileDoor {
  /**
   * Loads `module` next to every copy of the door (main's now, each serving thread's and every
   * replacement's when it starts). Resolves once main's copy is loaded.
   */
  tap(module: FileDoorTapModule): Promise<FileDoorChannel>;
}

/**
 * The file door service.
 *
 * @example
 * deps: { door: fileDoorRef },
 * async setup(ctx) {
 *   const channel = await ctx.deps.door.tap({ name: 'vendor', url: new URL('./door-tap.ts', import.meta.url).href });
 *   channel.onMessage((batch) => count(batch));
 * }
 */
export const fileDoorRef = createServiceRef<FileDoor>('http.file-door');

/** A file of a public mount the door did not find on this node. */
export interface FileDoorMiss {
  /** The filesystem's mount: `/memfs`, `/` (disk), a vendor's. */
  mount: string;
  /** The file's path inside the filesystem (cleaned). */
  path: string;
}

const MISS = Symbol.for('core.files.miss');

/**
 * The file a request asked for when the core's door found it missing here and left the request to
 * the router, because a `httpHooksRef.forward` tap may fetch it elsewhere (a cluster node); else
 * undefined. Nobody forwarding it, the router answers the door's 404.
 *
 * @example
 * const miss = fileDoorMiss(request.raw);
 * if (miss) return proxyToHolder(miss.mount, miss.path);
 */
export function fileDoorMiss(req: object): FileDoorMiss | undefined {
  return (req as Record<symbol, FileDoorMiss | undefined>)[MISS];
}

/**
 * Marks a request as a door miss (the core's door does, before it leaves the request to the router).
 *
 * @example
 * markFileDoorMiss(req, { mount: '/memfs', path: '/live/x.m3u8' });
 */
export function markFileDoorMiss(req: object, miss: FileDoorMiss): void {
  (req as Record<symbol, FileDoorMiss>)[MISS] = miss;
}
