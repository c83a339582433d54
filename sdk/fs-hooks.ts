import type { IncomingHttpHeaders } from 'node:http';
import { createHooksRef, SyncBailHook, SyncHook, SyncWaterfallHook } from './hooks.ts';

/*
 * File-serving hooks, called by the core's file door for every public mount (memfs, disk, a
 * vendor's) for GET/HEAD and uploads. The sessions plugin taps them to count HLS viewers and
 * uploads (through a door tap module, `fileDoorRef`, so its taps run in every serving thread too);
 * a vendor may tap them for its own policy. All are synchronous: the door calls them on its hot
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

/**
 * True when some tap needs to see GET/HEAD requests of a mount (else the mount skips the hooks).
 *
 * @example
 * if (fsServeTapped(hooks)) return slowPath(request, reply); // someone counts or may refuse
 */
export function fsServeTapped(hooks: FsServeHooks | undefined): hooks is FsServeHooks {
  return hooks !== undefined && (hooks.preServe.isUsed() || hooks.onServed.isUsed() || hooks.transformPlaylist.isUsed());
}

/**
 * Runs `transformPlaylist` for a mount, remembering per file version its text and the Buffers of
 * the bodies the taps returned: a viewer reloads the same playlist version several times, and a
 * tap that hands back the same string (the sessions plugin keeps its rewrite per viewer) then
 * costs a map lookup instead of a decode and an encode. One per mount.
 *
 * @example
 * const rewrites = new PlaylistRewrites();
 * const body = rewrites.apply(hooks, request, path, file.data) ?? file.data;
 */
export class PlaylistRewrites {
  readonly #text = new WeakMap<Buffer, string>();
  readonly #bodies = new WeakMap<Buffer, Map<string, Buffer>>();

  /**
   * The body after `transformPlaylist`, or undefined when no tap changed it (or none is tapped,
   * or the path is no `.m3u8`).
   */
  apply(hooks: FsServeHooks, request: FsServeRequest, path: string, data: Buffer): Buffer | undefined {
    if (!path.endsWith('.m3u8') || !hooks.transformPlaylist.isUsed()) return undefined;
    let text = this.#text.get(data);
    if (text === undefined) {
      text = data.toString('utf8');
      this.#text.set(data, text);
    }
    const out = hooks.transformPlaylist.call(text, request);
    if (out === text) return undefined;
    let bodies = this.#bodies.get(data);
    if (!bodies) {
      bodies = new Map();
      this.#bodies.set(data, bodies);
    }
    let buf = bodies.get(out);
    if (!buf) {
      // a Buffer of its own (not a slice of the shared pool), like the files memfs serves
      buf = Buffer.allocUnsafeSlow(Buffer.byteLength(out, 'utf8'));
      buf.write(out, 'utf8');
      // bounded: per-request bodies (fresh ids in every answer) must not pile up
      if (bodies.size >= 256) bodies.clear();
      bodies.set(out, buf);
    }
    return buf;
  }
}

/**
 * Bytes a finished response put on the wire: its header block (node keeps it as `_header`) plus the body.
 *
 * @example
 * res.on('finish', () => hooks.onServed.call({ ...event, bytes: responseBytes(res, body.length) }));
 */
export function responseBytes(res: object, body: number): number {
  const header = (res as { _header?: unknown })._header;
  return (typeof header === 'string' ? header.length : 0) + body;
}
