import type { IncomingMessage, ServerResponse } from 'node:http';
import { IdleTick } from '../../sdk/idle-tick.ts';
import { requestHasBody } from '../../sdk/linger-close.ts';
import { CHECK_INTERVAL_MS } from './listener-bounds.ts';

interface Tracked {
  req: IncomingMessage;
  res: ServerResponse;
  start: number;
  bytes: number;
  progress: number;
}

/**
 * `http.body_timeout_seconds`: a request body must arrive whole within the timeout of its
 * headers, or it is answered 408 and its connection closed, so a client that trickles a body
 * (to the public `POST /api/login`, say) cannot hold a connection and a parser for ever. A body
 * the route streams (`isStreamed`: uploads, live ingest) may take as long as it likes but is
 * cut after the timeout without a byte; bytes the route has not read yet count as progress (the
 * wait is the server's, e.g. an auth backoff). Requests without a body cost nothing; those with
 * one are looked at once a second (one timer per listener, only while there are any).
 */
export class BodyDeadlines {
  readonly #live = new Set<Tracked>();
  readonly #isStreamed: (req: IncomingMessage) => boolean;
  #timeoutMs: number;
  /** The sweep, while bodies are tracked. */
  readonly #tick = new IdleTick(CHECK_INTERVAL_MS, () => {
    this.sweep();
    return this.#live.size > 0;
  });

  /** `isStreamed`: which bodies get the idle rule only (all of them when it always says true). */
  constructor(timeoutMs: number, isStreamed: (req: IncomingMessage) => boolean) {
    this.#timeoutMs = timeoutMs;
    this.#isStreamed = isStreamed;
  }

  set timeoutMs(ms: number) { this.#timeoutMs = ms; }

  get size(): number { return this.#live.size; }

  /** Whether the sweep's timer runs (only while bodies are tracked). */
  get sweeping(): boolean { return this.#tick.ticking; }

  track(req: IncomingMessage, res: ServerResponse): void {
    if (req.complete || !requestHasBody(req)) return;
    const now = Date.now();
    const t: Tracked = { req, res, start: now, bytes: req.socket?.bytesRead ?? 0, progress: now };
    this.#live.add(t);
    res.once('close', () => this.#live.delete(t));
    this.#tick.wake();
  }

  /** Cuts the bodies past their deadline (the timer calls it; tests may too). */
  sweep(now = Date.now()): void {
    for (const t of this.#live) {
      const socket = t.req.socket;
      if (t.req.complete || !socket || socket.destroyed) {
        this.#live.delete(t);
        continue;
      }
      const bytes = socket.bytesRead;
      if (bytes !== t.bytes || t.req.readableLength > 0) {
        t.bytes = bytes;
        t.progress = now;
      }
      // a client that waits for `100 Continue` sends nothing until the server asks (memfs asks only
      // after the Basic check, which a backoff may hold): its clock starts then
      if (awaitsContinue(t)) {
        t.start = now;
        t.progress = now;
      }
      const streamed = this.#isStreamed(t.req);
      if (streamed ? now - t.progress >= this.#timeoutMs : now - t.start >= this.#timeoutMs) this.#cut(t, streamed);
    }
  }

  #cut(t: Tracked, streamed: boolean): void {
    this.#live.delete(t);
    const socket = t.req.socket;
    const { res } = t;
    // the request is destroyed too: a route still reading the body (a stream) sees it end with an
    // error at once, as when the client goes, instead of waiting on a socket that is gone
    if (res.headersSent || res.writableEnded) {
      t.req.destroy();
      socket.destroy();
      return;
    }
    const seconds = Math.round(this.#timeoutMs / 1000);
    const detail = streamed
      ? `no byte of the request body arrived for ${seconds} s (http.body_timeout_seconds)`
      : `the request body did not arrive within ${seconds} s (http.body_timeout_seconds)`;
    const body = JSON.stringify({ code: 408, message: 'Request Timeout', details: [detail] });
    // a client that does not read its answer either is not waited for
    const stop = setTimeout(() => { t.req.destroy(); socket.destroy(); }, 1000).unref();
    res.writeHead(408, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body, () => {
      clearTimeout(stop);
      t.req.destroy();
      socket.destroy();
    });
  }

  /** Ends the sweep for good (the listener closed). */
  close(): void {
    this.#tick.stop();
    this.#live.clear();
  }
}

/** The client asked for `100 Continue` and the server has not sent it yet (node marks the response when it does). */
function awaitsContinue(t: Tracked): boolean {
  const expect = t.req.headers.expect;
  return typeof expect === 'string' && /100-continue/i.test(expect) && (t.res as ServerResponse & { _sent100?: boolean })._sent100 !== true;
}
