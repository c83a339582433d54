import { createServiceRef } from './refs.ts';
import type { FsServeRefusal, FsServeRequest, FsServedEvent, FsWrittenEvent } from './fs-hooks.ts';

/*
 * The file door: the core's one code path that serves and stores the files of every public mount
 * (`/memfs`, `/`, a vendor's), run unchanged on the main thread and in every serving thread. A
 * plugin that must see file requests wherever they are answered (the sessions plugin counts HLS
 * viewers) puts taps into the door as a module: the core loads it next to every copy of the door,
 * main's included, and the module talks to its plugin over one channel. The plugin never learns
 * how many copies run, or where: the door gives the copies what they share (a counter with
 * reservations, a set of recent ids) and carries their reports to the plugin in batches.
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
  /** The module's counter, one for every copy (`FileDoorTapModule.counter`; without one, no limit). */
  readonly counter: FileDoorCounter;
  /** The module's set of recent ids, one for every copy (`FileDoorTapModule.recent`; without, it keeps none). */
  readonly recent: FileDoorRecent;
  /** Adds `n` to `key` in this copy's next report (`FileDoorReport.sums`, summed per key). */
  add(key: string, n: number): void;
  /**
   * Puts `item` in this copy's next report (`FileDoorReport.items`, in order). Main's copy reports
   * every call at once, synchronously; a thread's copy at most every 500 ms, or at once with `now`.
   */
  report(item: unknown, now?: boolean): void;
}

/**
 * A count every copy of a module reads at once (shared memory): the plugin's own count (`set` on
 * its side) plus the places copies reserved and the plugin has not counted yet.
 */
export interface FileDoorCounter {
  /** Places taken: the plugin's count and the reservations not given back yet. */
  taken(): number;
  /** True when the module's limit is reached (never without a limit). */
  full(): boolean;
  /** True while the plugin says no place is left for a reason of its own (`block` on its side). */
  blocked(): boolean;
  /**
   * Takes a place: added first, then the total read, so of two copies racing for the last place
   * at most one gets it; false when none was left. The place goes back once the plugin handled
   * the report that carries it (it counts the place itself by then), or after 8 s (a thread died).
   */
  reserve(): boolean;
  /** A refusal: true for the first one after an admission, in whichever copy (one copy hears it). */
  refused(): boolean;
  /** An admission: the next refusal starts a new run. */
  admitted(): void;
}

/** Ids every copy of a module sees at once: the last ones added (a ring; ids of up to 24 Latin-1 characters, longer ones are not kept). */
export interface FileDoorRecent {
  add(id: string): void;
  has(id: string): boolean;
}

/** What one copy gathered since its last report. */
export interface FileDoorReport {
  /** `add`'s sums, per key. */
  sums: Array<[key: string, n: number]>;
  /** `report`'s items, in order. */
  items: unknown[];
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
  /** The limit of the module's counter (`FileDoorCounter`; absent or 0: none). */
  counter?: number;
  /** How many ids the module's recent set keeps (`FileDoorRecent`; absent: none). */
  recent?: number;
}

/** The plugin's side of its tap module. */
export interface FileDoorChannel {
  /** Sends a message to every copy of the module (main's and the threads'), in order. */
  broadcast(message: unknown): void;
  /** Receives what the copies `send`; one receiver. */
  onMessage(fn: (message: unknown) => void): void;
  /** Receives each copy's reports; one receiver. Reservations a report carries are given back after it returns. */
  onReport(fn: (report: FileDoorReport) => void): void;
  /** The module's counter: `set` is the plugin's own count (places it holds), `block` raises or lowers `blocked` in every copy at once. */
  readonly counter: Pick<FileDoorCounter, 'taken' | 'full' | 'blocked'> & { set(n: number): void; block(on: boolean): void };
  /** The module's recent ids. */
  readonly recent: FileDoorRecent;
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

// the core's door sets it (registered: the SDK and the core may be separate copies)
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
