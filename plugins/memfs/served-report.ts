import type { IncomingMessage } from 'node:http';
import { normalizeIp } from '../../sdk/client-address.ts';
import type { FsServeHooks } from '../../sdk/fs-hooks.ts';

/**
 * What a serving thread reports of the memfs reads it answered, so that `onServed` (sessions:
 * bytes per viewer) sees them on the main thread as if main had answered.
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

/** At most this long between a read on a thread and its `onServed` on main. */
export const REPORT_MS = 500;
const MAX_BATCH = 1000;

/** Thread side: collects reports and sends them in batches (every REPORT_MS, or at MAX_BATCH). */
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

/** Main side: a thread's batch through `onServed`, as the fast path would have called it. */
export function replayServed(hooks: FsServeHooks, batch: readonly ServedReport[]): void {
  if (!hooks.onServed.isUsed()) return;
  for (const r of batch) {
    hooks.onServed.call({
      request: { mount: '/memfs', path: r.path, query: r.query, remote: r.remote, headers: r.headers, method: r.method },
      status: 200,
      bytes: r.bytes,
    });
  }
}
