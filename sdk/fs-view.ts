import type { FsFile, FsNode } from './fs.ts';

/*
 * A mount's view module (`FsPublicMount.view`): code of the store's plugin that answers the
 * mount's reads in every serving thread, from the thread's copy of the store (its `changes` feed)
 * and what the store puts there for it. A thread that holds a request (a blocking playlist reload)
 * holds it itself, without a hop to main. What the view does not answer goes to main, as a miss.
 */

/** What the door tells a view of a read besides its path. */
export interface FsViewAsk {
  /** The raw query string without `?` (`''` when none). */
  query: string;
  /** The client (normalized, no port); undefined when the thread cannot tell it (a proxy header: main resolves those). */
  remote: string | undefined;
}

/** What a view gets in its thread. */
export interface FsViewContext {
  /** The thread's copy of the store's file at `path` (every file of the feed, dot-files included). */
  get(path: string): FsFile | undefined;
  /** Calls `fn` after each change of the copy (put or delete of `path`) is applied, in the feed's order. */
  onChange(fn: (path: string) => void): void;
  /** Sends a message to the store on main (`FilesystemService.fromView`), in order; batch what is frequent. */
  send(message: unknown): void;
}

/** One thread's view of a mount. */
export interface FsView {
  /**
   * What a GET or HEAD of `path` answers: a node (the thread answers it), undefined (main does,
   * as for a miss), or a promise of either (the thread holds the request meanwhile). A thrown
   * or rejected ApiError is the answer, its status and Error body, as on main.
   */
  open(path: string, ask: FsViewAsk): FsNode | undefined | Promise<FsNode | undefined>;
  /** The thread's door closes (the app closes, the thread ends). */
  close?(): void;
}

/** The default export of a view module: `init` is `FsPublicMount.view.init` (structured clone). */
export type FsViewFactory = (init: unknown, ctx: FsViewContext) => FsView;
