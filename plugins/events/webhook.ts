import { createHmac } from 'node:crypto';
import { maskCredentials } from '../../sdk/index.ts';
import type { CoreEvent } from '../../sdk/index.ts';

export interface WebhookOptions {
  url: string;
  secret: string;
  /** Events waiting beyond the one in flight; the oldest is dropped beyond. */
  queue: number;
  /** An event is given up (counted `failed`) once its first attempt is this old. */
  retryMs: number;
  timeoutMs: number;
  /** First retry delay; doubles per attempt up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Counters of the target this one replaces (a config reload keeps them). */
  counters?: WebhookCounters;
}

/** What a target has done so far: carried over a config reload. */
export type WebhookCounters = Pick<WebhookState, 'delivered' | 'failed' | 'dropped' | 'last_status' | 'last_error'>;

/** Delivery state of one target (`GET /api/v3/events/webhooks`). */
export interface WebhookState {
  url: string;
  queued: number;
  delivered: number;
  failed: number;
  dropped: number;
  last_status: number;
  last_error: string;
}

/** `sha256=<hex HMAC-SHA256 of the body>`, the `X-Core-Signature` header. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The URL as shown in the API: credentials masked (the SDK's one rule, `maskCredentials`). */
export function shownUrl(url: string): string {
  return maskCredentials(url);
}

/** 4xx answers other than 408 and 429 will not change by retrying. */
const permanent = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

/**
 * One webhook target: a bounded queue, one request in flight, retries with exponential backoff
 * for a bounded time. `enqueue` only queues: the caller (the event bus) never waits.
 */
export class WebhookTarget {
  readonly #o: Required<Omit<WebhookOptions, 'counters'>>;
  readonly #queue: CoreEvent[] = [];
  readonly #closing = new AbortController();
  readonly state: WebhookState;
  #current: { e: CoreEvent; body: string; firstAt: number; attempt: number } | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(o: WebhookOptions) {
    const { counters, ...rest } = o;
    this.#o = { baseDelayMs: 500, maxDelayMs: 30_000, ...rest };
    this.state = { url: shownUrl(o.url), queued: 0, delivered: 0, failed: 0, dropped: 0, last_status: 0, last_error: '', ...counters };
  }

  enqueue(e: CoreEvent): void {
    if (this.#closing.signal.aborted) return;
    if (this.#queue.length >= this.#o.queue) {
      this.#queue.shift();
      this.state.dropped++;
    }
    this.#queue.push(e);
    this.state.queued = this.#queue.length + (this.#current ? 1 : 0);
    if (!this.#current) this.#next();
  }

  /** Id of the oldest event not delivered, failed or dropped yet (the one in flight first). */
  firstPending(): number | undefined {
    return (this.#current?.e ?? this.#queue[0])?.id;
  }

  /** Stops retries and aborts the request in flight; what is queued is dropped. */
  close(): void {
    this.#closing.abort();
    if (this.#timer) clearTimeout(this.#timer);
  }

  #next(): void {
    const e = this.#queue.shift();
    this.#current = e && { e, body: JSON.stringify(e), firstAt: Date.now(), attempt: 0 };
    this.state.queued = this.#queue.length + (e ? 1 : 0);
    if (this.#current) void this.#attempt();
  }

  async #attempt(): Promise<void> {
    const cur = this.#current!;
    this.#timer = undefined;
    cur.attempt++;
    let retry = true;
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'datarhei-core-events',
        'x-core-event-id': `${cur.e.boot}-${cur.e.id}`,
        'x-core-event-type': cur.e.type,
        'x-core-timestamp': String(Math.floor(Date.now() / 1000)),
      };
      if (this.#o.secret) headers['x-core-signature'] = signature(this.#o.secret, cur.body);
      const res = await fetch(this.#o.url, {
        method: 'POST', headers, body: cur.body, redirect: 'manual',
        signal: AbortSignal.any([this.#closing.signal, AbortSignal.timeout(this.#o.timeoutMs)]),
      });
      await res.body?.cancel().catch(() => {});
      // closed meanwhile: the successor resumes from this event, this target must not go on
      if (this.#closing.signal.aborted) return;
      this.state.last_status = res.status;
      if (res.status >= 200 && res.status < 300) {
        this.state.delivered++;
        this.state.last_error = '';
        return this.#next();
      }
      this.state.last_error = `HTTP ${res.status}`;
      retry = !permanent(res.status);
    } catch (err) {
      if (this.#closing.signal.aborted) return;
      this.state.last_status = 0;
      this.state.last_error = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    }
    const delay = Math.min(this.#o.baseDelayMs * 2 ** (cur.attempt - 1), this.#o.maxDelayMs);
    if (!retry || Date.now() + delay - cur.firstAt > this.#o.retryMs) {
      this.state.failed++;
      return this.#next();
    }
    this.#timer = setTimeout(() => void this.#attempt(), delay);
  }
}
