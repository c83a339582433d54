import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BasicCredentials } from '../../sdk/credentials.ts';
import type { CorsPolicy } from '../../sdk/fs-cors.ts';
import type { FsServeHooks } from '../../sdk/fs-hooks.ts';
import type { PlaylistRewrites } from './serve-hooks.ts';
import type { MimeTable } from '../../sdk/fs-mime.ts';
import type { FsNode, FsWriteResult } from '../../sdk/fs.ts';

/*
 * The file door's parts as each copy (main's, a serving thread's) builds them. The door's code is
 * the same everywhere; what differs is where a mount's files come from (`open`) and where an
 * upload is stored (`store`), and those are given here.
 */

export type Maybe<T> = T | Promise<T>;

/** One public mount (a filesystem's `publicMount`) as a copy of the door serves it. */
export interface DoorMount {
  /** The filesystem's name (`mem`, `disk`). */
  name: string;
  /** URL prefix: `/memfs`, or `` for the disk's `/`. */
  prefix: string;
  defaultType: string;
  mime: MimeTable;
  /** File served for a folder (disk: `index.html`). */
  defaultFile?: string;
  /** Public writes: absent = read-only. */
  writes?: { basic?: BasicCredentials };
  /** First path segments left to the router (a catch-all mount). */
  reserved: ReadonlySet<string>;
  preflight: boolean;
  /** Its filesystem serves a view by request (`FsPublicMount.asks`): `open` gets the query and the client. */
  asks?: boolean;
  /** A thread: the largest upload it receives for this mount (larger ones go to main). */
  uploadMax?: number;
  /**
   * What `path` names here. `undefined` is a miss: main answers 404, a thread passes the request
   * to main (which may know more: a link, an upload in progress). `ask`: the request's raw query
   * and its client, given to a mount that `asks` (LL-HLS's blocking reloads, its on-demand starts).
   */
  open(path: string, head: boolean, ask?: DoorAsk): Maybe<FsNode | undefined>;
}

/** What a mount that `asks` learns of a read besides its path. */
export interface DoorAsk {
  /** The raw query string without `?` (`''` when none). */
  query: string;
  /** The client as the door resolved it (normalized, no port); undefined where this copy cannot tell (a thread: a proxy header). */
  remote: string | undefined;
}

/** Where an upload accepted by the door goes. */
export interface DoorStore {
  /**
   * Stores the body of `req` at `path` of `mount` and calls `onWritten`; resolves with the result,
   * or rejects with an ApiError (507, 400). `remote` is the client as the door resolved it.
   */
  write(mount: DoorMount, path: string, req: IncomingMessage, remote: string): Promise<FsWriteResult>;
  /** Deletes `path` of `mount`: true when something was deleted. */
  delete(mount: DoorMount, path: string): Promise<boolean>;
}

/**
 * The Basic check of a mount's writes of `path`: resolves, or rejects with the ApiError to send
 * (401; 403 for a run's credential that does not name the path).
 */
export type DoorAuthorize = (mount: DoorMount, remote: string, authorization: string | undefined, path: string, method?: string) => Promise<void>;

/** What one copy of the door needs besides its mounts. */
export interface DoorEnv {
  /** `main` or `thread`: a thread passes what it cannot answer to main. */
  readonly where: 'main' | 'thread';
  cors: CorsPolicy;
  /** This copy's file hooks: in-process taps (main) and the taps of door modules (everywhere). */
  hooks: FsServeHooks;
  rewrites: PlaylistRewrites;
  /**
   * The client's address, or undefined when this copy cannot tell (a thread: a request through a
   * proxy header; main resolves those).
   */
  clientOf(req: IncomingMessage): string | undefined;
  /** First path segments of the app's other routes (a catch-all mount leaves them alone). */
  routeHeads(): ReadonlySet<string>;
  store: DoorStore;
  authorize: DoorAuthorize;
  /** A thread: true while main has in-process read taps (then every read goes to main). */
  mainReads?(): boolean;
  /** A thread: whether it takes this write itself (false: main gets it, body unread). */
  takesWrite?(m: DoorMount, req: IncomingMessage, res: ServerResponse, path: string): Maybe<boolean>;
  /** Main: a lookup that failed with something other than an ApiError (answered 500, its detail only logged). */
  onError?(err: unknown, path: string): void;
  /** Main: a read that misses is left to the router when this says so (a cluster node may have the file). */
  missToRouter?(): boolean;
}

