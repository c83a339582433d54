import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { IdleTick, type CoreEvent, type EventFilter, type EventsService, type EventSubscription } from '../../sdk/index.ts';

export interface SseOptions {
  /** Unread bytes (Node's buffer of the response) beyond which a client is dropped. */
  limitBytes: number;
  /** Time a dropped client gets to read its last bytes before the socket is destroyed. */
  graceMs: number;
  /** Heartbeat comment interval; 0 = none. */
  heartbeatMs: number;
}

/** Counters of `GET /api/v3/events/status`. */
export interface SseStats {
  open: number;
  dropped: number;
  /** The most bytes any client had waiting; stays near `limit_bytes` however slow a client is. */
  peak_queued_bytes: number;
  limit_bytes: number;
}

/** One event as an SSE block. The type is in the JSON (no `event:` line), so `onmessage` gets them all. */
export function sseBlock(e: CoreEvent): string {
  return `id: ${e.boot}-${e.id}\ndata: ${JSON.stringify(e)}\n\n`;
}

/** Blocks by event, built once for all the streams that get it (events are frozen, held by the history). */
class BlockCache {
  readonly #map = new WeakMap<CoreEvent, string>();
  get(e: CoreEvent): string {
    let b = this.#map.get(e);
    if (b === undefined) {
      b = sseBlock(e);
      this.#map.set(e, b);
    }
    return b;
  }
}

/**
 * The open event streams: writes events as they come, a heartbeat comment for all on one timer
 * (running only while a stream is open),
 * and drops a client whose unread bytes pass the bound with a last `events.overflow` event, so a
 * stalled reader costs at most the bound (plus one event) until its grace ends.
 */
export class SseHub {
  readonly #opts: SseOptions;
  readonly #clients = new Set<SseClient>();
  readonly #heartbeat: IdleTick | undefined;
  readonly blocks = new BlockCache();
  readonly stats: SseStats;

  constructor(opts: SseOptions) {
    this.#opts = opts;
    this.stats = { open: 0, dropped: 0, peak_queued_bytes: 0, limit_bytes: opts.limitBytes };
    if (opts.heartbeatMs > 0) {
      this.#heartbeat = new IdleTick(opts.heartbeatMs, () => {
        for (const c of this.#clients) c.send(': heartbeat\n\n');
        return this.#clients.size > 0;
      });
    }
  }

  /** Starts a stream on a hijacked response (headers not sent yet); `subscribe` may throw first. */
  open(res: ServerResponse, headers: OutgoingHttpHeaders, bus: EventsService, filter: EventFilter, fromId: string | undefined, sees?: (e: CoreEvent) => boolean): void {
    const client = new SseClient(res, this, this.#opts);
    // the filter is checked before anything is written: a bad one gets its 400 from the route
    client.attach(bus, filter, fromId, headers, sees);
    this.#clients.add(client);
    this.stats.open = this.#clients.size;
    this.#heartbeat?.wake();
  }

  gone(c: SseClient, dropped: boolean): void {
    if (!this.#clients.delete(c)) return;
    this.stats.open = this.#clients.size;
    if (dropped) this.stats.dropped++;
  }

  queued(bytes: number): void {
    if (bytes > this.stats.peak_queued_bytes) this.stats.peak_queued_bytes = bytes;
  }

  /** True once the app closed it: a new stream would never get an event (a reload's new app takes them). */
  closed = false;

  /** Ends every stream (app close). */
  close(): void {
    this.closed = true;
    this.#heartbeat?.stop();
    for (const c of [...this.#clients]) c.end();
  }
}

class SseClient {
  readonly #res: ServerResponse;
  readonly #hub: SseHub;
  readonly #opts: SseOptions;
  #sub: EventSubscription | undefined;
  #done = false;
  /** Blocks of the current delivery pass, written together once it ends (one syscall, not one per event). */
  #batch: string[] = [];
  #batchBytes = 0;
  #scheduled = false;
  /**
   * Blocks held until the replay is written: the replay comes inside `subscribe`, before the headers,
   * and may pass the client's bound (the history is the operator's); it goes out as the socket drains.
   * Events that come meanwhile queue behind it and count against the bound.
   */
  #held: string[] | undefined = [];
  #heldAt = 0;
  #heldLive = -1;

  constructor(res: ServerResponse, hub: SseHub, opts: SseOptions) {
    this.#res = res;
    this.#hub = hub;
    this.#opts = opts;
  }

  /** `sees`: a caller's policies (an IAM user's token): the events it may not see are left out. */
  attach(bus: EventsService, filter: EventFilter, fromId: string | undefined, headers: OutgoingHttpHeaders, sees?: (e: CoreEvent) => boolean): void {
    // the replay comes synchronously inside subscribe: held, it is written after the headers
    this.send('retry: 2000\n\n');
    this.#sub = bus.subscribe(filter, fromId, (e) => { if (!sees || sees(e)) this.send(this.#hub.blocks.get(e)); });
    this.#res.writeHead(200, headers);
    this.#res.on('close', () => this.#finish(false));
    this.#heldLive = 0;
    this.#writeHeld();
  }

  send(chunk: string): void {
    if (this.#done) return;
    if (this.#held) {
      this.#held.push(chunk);
      if (this.#heldLive >= 0 && (this.#heldLive += chunk.length) > this.#opts.limitBytes) this.#overflow(this.#heldLive);
      return;
    }
    this.#batch.push(chunk);
    this.#batchBytes += chunk.length;
    // a batch stays a fraction of the bound, so the bytes held stay near it (limit + a quarter)
    if (this.#batchBytes >= this.#opts.limitBytes / 4) this.#flush();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flush);
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (!this.#batch.length) return;
    const chunk = this.#batch.length === 1 ? this.#batch[0]! : this.#batch.join('');
    this.#batch = [];
    this.#batchBytes = 0;
    if (this.#done) return;
    const res = this.#res;
    res.write(chunk);
    const queued = res.writableLength;
    this.#hub.queued(queued);
    if (queued > this.#opts.limitBytes) this.#overflow(queued);
  };

  /** Writes the held blocks a batch at a time, each once the socket took the last (its write callback). */
  readonly #writeHeld = (): void => {
    const held = this.#held;
    if (!held || this.#done) return;
    if (this.#heldAt === held.length) {
      this.#held = undefined;
      return;
    }
    const from = this.#heldAt;
    const most = this.#opts.limitBytes / 4;
    let bytes = 0;
    while (this.#heldAt < held.length && (bytes === 0 || bytes + held[this.#heldAt]!.length <= most)) bytes += held[this.#heldAt++]!.length;
    const res = this.#res;
    res.write(this.#heldAt - from === 1 ? held[from]! : held.slice(from, this.#heldAt).join(''), this.#writeHeld);
    this.#hub.queued(res.writableLength);
  };

  end(): void {
    if (this.#done) return;
    this.#finish(false);
    this.#res.end();
  }

  #overflow(queued: number): void {
    const res = this.#res;
    const last = { id: 0, boot: '', time: new Date().toISOString(), type: 'events.overflow', subject: {}, payload: { queued_bytes: queued, limit_bytes: this.#opts.limitBytes } };
    this.#finish(true);
    res.end(`data: ${JSON.stringify(last)}\n\n`);
    // the bytes stay bounded meanwhile: nothing more is written; a reader that never comes back is cut
    const t = setTimeout(() => res.destroy(), this.#opts.graceMs);
    t.unref();
    res.once('close', () => clearTimeout(t));
  }

  #finish(dropped: boolean): void {
    if (this.#done) return;
    this.#done = true;
    this.#sub?.close();
    this.#hub.gone(this, dropped);
  }
}
