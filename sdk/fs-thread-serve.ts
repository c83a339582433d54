import type { IncomingMessage } from 'node:http';
// files one by one, not the index: this module runs in every serving thread (memory per thread)
import { normalizeIp } from './client-address.ts';
import { fsServeTapped, preServeSeesEveryFile, type FsServeHooks } from './fs-hooks.ts';

/*
 * What a filesystem mount's module in the serving threads (memfs, disk) shares: which reads a
 * thread may answer while the file hooks are tapped, and its reports of them to `onServed` on main.
 */

/**
 * Which reads of a mount a serving thread answers: `all` (no file hook tapped), `segments` (hooks
 * tapped, but `preServe` looks at playlists only: playlists go to main, other files are answered
 * and reported to `onServed` in batches), `none` (a `preServe` tap may refuse any file: all reads
 * go to main).
 */
export type ThreadServeMode = 'all' | 'segments' | 'none';

/**
 * The mode the app's file hooks allow now (taps are made in setup: look again in `onListen`).
 *
 * @example
 * ctx.onListen(() => channel.broadcast({ mode: threadServeMode(hooks) }));
 */
export function threadServeMode(hooks: FsServeHooks): ThreadServeMode {
  return !fsServeTapped(hooks) ? 'all' : preServeSeesEveryFile(hooks) ? 'none' : 'segments';
}

/**
 * What a serving thread reports of a read it answered, so that `onServed` (sessions: bytes per
 * viewer) sees it on the main thread as if main had answered.
 */
export interface ServedReport {
  path: string;
  query: string;
  remote: string;
  method: 'GET' | 'HEAD';
  bytes: number;
  /** The headers taps read (referer, user-agent); not the whole set. */
  headers: Record<string, string>;
}

/**
 * At most this long between a read on a thread and its `onServed` on main.
 *
 * @example
 * const stale = Date.now() - sentAt > REPORT_MS * 2;
 */
export const REPORT_MS = 500;
const MAX_BATCH = 1000;

/**
 * Thread side: collects reports and sends them in batches (every REPORT_MS, or at MAX_BATCH).
 *
 * @example
 * const reports = new ServedBatcher((batch) => ctx.send(batch));
 * reports.add(req, path, query, responseBytes(res, body));
 */
export class ServedBatcher {
  #batch: ServedReport[] = [];
  readonly #send: (batch: ServedReport[]) => void;
  readonly #timer: NodeJS.Timeout;

  constructor(send: (batch: ServedReport[]) => void) {
    this.#send = send;
    // unref: a thread ends when its listener closes, whatever is pending
    this.#timer = setInterval(() => this.flush(), REPORT_MS).unref();
  }

  add(req: IncomingMessage, path: string, query: string, bytes: number): void {
    const h = req.headers;
    const headers: Record<string, string> = {};
    if (h.referer !== undefined) headers.referer = h.referer;
    if (h['user-agent'] !== undefined) headers['user-agent'] = h['user-agent'];
    this.#batch.push({
      path, query, remote: normalizeIp(req.socket.remoteAddress ?? ''), method: req.method === 'HEAD' ? 'HEAD' : 'GET', bytes, headers,
    });
    if (this.#batch.length >= MAX_BATCH) this.flush();
  }

  flush(): void {
    if (this.#batch.length === 0) return;
    const batch = this.#batch;
    this.#batch = [];
    this.#send(batch);
  }

  close(): void {
    clearInterval(this.#timer);
  }
}

/**
 * Main side: a thread's batch through `onServed` of mount `mount` (`/memfs`, `/`), as main's own
 * answer would have called it.
 *
 * @example
 * channel.onMessage((batch) => replayServed(hooks, '/memfs', batch as ServedReport[]));
 */
export function replayServed(hooks: FsServeHooks, mount: string, batch: readonly ServedReport[]): void {
  if (!hooks.onServed.isUsed()) return;
  for (const r of batch) {
    hooks.onServed.call({
      request: { mount, path: r.path, query: r.query, remote: r.remote, headers: r.headers, method: r.method },
      status: 200,
      bytes: r.bytes,
    });
  }
}
