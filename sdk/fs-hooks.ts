import type { IncomingHttpHeaders } from 'node:http';
import { createHooksRef, SyncBailHook, SyncHook, SyncWaterfallHook } from './hooks.ts';

/*
 * File-serving hooks, called by the core's file door for every public mount (each filesystem
 * provider's) for GET/HEAD and uploads. A plugin taps them to count viewers and uploads (through
 * a door tap module, `fileDoorRef`, so its taps run in every serving thread too) or for its own
 * policy. All are synchronous: the door calls them on its hot
 * path, where a promise per request would cost more than the whole answer.
 *
 * Cost rule for the mounts: `onServed` and `onWritten` are accounting hooks and run on every hit
 * when tapped; `preServe` and `transformPlaylist` run only when tapped (`isUsed()`).
 */

/** One GET or HEAD of a public mount, as the hooks see it. */
export interface FsServeRequest {
  /** The filesystem's mount, `/memfs` or `/` (disk). */
  readonly mount: string;
  /** The file's path inside the filesystem, `/live/x.m3u8`. */
  readonly path: string;
  /** The raw query string without `?` (`''` when none). */
  readonly query: string;
  /** The client's address as the front door resolved it (normalized, no port). */
  readonly remote: string;
  readonly headers: IncomingHttpHeaders;
  readonly method: 'GET' | 'HEAD';
  /**
   * Room for the taps to leave a note for the later hooks of the same request (the sessions
   * plugin puts its session id here in `preServe` and reads it in `onServed`).
   */
  note?: unknown;
}

/** A refusal by `preServe`: the mount answers with this status and Error body. */
export interface FsServeRefusal {
  status: number;
  message: string;
  details: string[];
  /** Stable error code for logs (e.g. `SESSIONS_LIMIT`); default `FS_SERVE_REFUSED`. */
  code?: string;
  /** Seconds to send as `Retry-After` (a 429 or 503 that passes). */
  retryAfter?: number;
  /** More headers of the answer, e.g. a 401's `WWW-Authenticate`. */
  headers?: Readonly<Record<string, string>>;
}

/** A finished GET/HEAD answer. */
export interface FsServedEvent {
  readonly request: FsServeRequest;
  readonly status: number;
  /** Bytes sent: the body (after any rewrite) plus an estimate of the header block. */
  readonly bytes: number;
}

/** A finished upload (PUT/POST) to a public mount. */
export interface FsWrittenEvent {
  readonly mount: string;
  readonly path: string;
  readonly remote: string;
  readonly headers: IncomingHttpHeaders;
  /** Body bytes stored. */
  readonly bytes: number;
}

/**
 * The file-serving hooks. A tap put in process (`ctx.hooks.tap`) runs on the main thread only:
 * while one sees reads (`preServe`, `transformPlaylist`, `onServed`), the serving threads leave
 * every read to main. Taps that run wherever the door answers are door tap modules (`fileDoorRef`).
 *
 * @example
 * ctx.hooks.tap(fsServeHooksRef, 'preServe', (req) =>
 *   req.path.startsWith('/private/') ? { status: 403, message: 'Forbidden', details: ['private'] } : undefined);
 * ctx.hooks.tap(fsServeHooksRef, 'onServed', (ev) => { served += ev.bytes; });
 */
export const fsServeHooksRef = createHooksRef('fs.serve', () => ({
  /** Before a GET/HEAD is answered; the first tap returning a refusal wins. */
  preServe: new SyncBailHook<[FsServeRequest], FsServeRefusal | undefined | void>(['request']),
  /** Rewrites the body of an `.m3u8` about to be sent with status 200 (each tap gets the previous result). */
  transformPlaylist: new SyncWaterfallHook<[string, FsServeRequest]>(['body', 'request']),
  /** After a GET/HEAD was answered (any status). */
  onServed: new SyncHook<[FsServedEvent]>(['event']),
  /** After an upload was stored. */
  onWritten: new SyncHook<[FsWrittenEvent]>(['event']),
}));

/** The hook set as a mount holds it. */
export type FsServeHooks = ReturnType<typeof fsServeHooksRef.create>;
