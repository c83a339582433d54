import { isTransient } from './client.ts';

/** A write not yet in S3: the bytes the service answered for, kept until S3 has them. */
export interface PendingPut { kind: 'put'; data: Buffer; mtimeMs: number; etag: string; version: number }
/** A delete not yet done in S3 (the object is gone for readers already). */
export interface PendingDelete { kind: 'delete'; version: number }
export type PendingOp = PendingPut | PendingDelete;

/** Bytes all S3 filesystems together may hold for S3 while it does not take them (documented default). */
export const DEFAULT_BUFFER_BYTES = 64 * 1024 * 1024;
/** Retry delays: from the first, doubling, up to the last. */
export const BACKOFF = { firstMs: 500, maxMs: 8_000 };
/** Uploads of the queue at once when it drains. */
const DRAIN_PARALLEL = 4;

export interface QueueHooks {
  /** Stores one op in S3 (throws what the SDK threw). */
  store(path: string, op: PendingOp): Promise<void>;
  /** An op that could not be stored and was dropped (a permanent refusal, or the service stopped). */
  lost(path: string, op: PendingOp, reason: string): void;
  /** S3 failed (`down`) or took an op again after failures (`up`). */
  health(up: boolean, err?: unknown): void;
}

/** The budget of buffered bytes, shared by every S3 filesystem. */
export class BufferBudget {
  used = 0;
  readonly limit: number;
  constructor(limit = DEFAULT_BUFFER_BYTES) {
    this.limit = limit;
  }
  take(n: number): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }
  give(n: number): void {
    this.used -= n;
  }
}

/** How an attempt ended: S3 has it, it waits in the queue (S3 failed, or not tried now), or S3 refused it for good. */
export type Outcome = 'stored' | 'queued' | 'lost';

const sizeOf = (op: PendingOp | undefined) => (op?.kind === 'put' ? op.data.length : 0);

/**
 * The writes and deletes of one S3 filesystem that S3 has not confirmed. One op per path (a later
 * one replaces an earlier, so a path is never stored twice at once and never out of order); while
 * S3 fails, the queue retries with backoff (an unref'd timer: it never holds the process up) and
 * readers are answered from it.
 */
export class UploadQueue {
  readonly #ops = new Map<string, PendingOp>();
  readonly #inflight = new Set<string>();
  readonly #budget: BufferBudget;
  readonly #hooks: QueueHooks;
  #version = 0;
  #healthy = true;
  #delay = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #draining = false;

  constructor(budget: BufferBudget, hooks: QueueHooks) {
    this.#budget = budget;
    this.#hooks = hooks;
  }

  /** True until a call fails, again once one succeeds. */
  get healthy(): boolean {
    return this.#healthy;
  }

  get files(): number {
    return this.#ops.size;
  }

  get bytes(): number {
    let n = 0;
    for (const op of this.#ops.values()) n += sizeOf(op);
    return n;
  }

  get(path: string): PendingOp | undefined {
    return this.#ops.get(path);
  }

  entries(): IterableIterator<[string, PendingOp]> {
    return this.#ops.entries();
  }

  /** Queues a write; false when the buffer has no room for it (the old op of the path stays). */
  put(path: string, data: Buffer, mtimeMs: number, etag: string): PendingPut | undefined {
    const old = this.#ops.get(path);
    const grow = data.length - sizeOf(old);
    if (grow > 0 && !this.#budget.take(grow)) return undefined;
    if (grow < 0) this.#budget.give(-grow);
    const op: PendingPut = { kind: 'put', data, mtimeMs, etag, version: ++this.#version };
    this.#ops.delete(path);
    this.#ops.set(path, op);
    return op;
  }

  /** Queues a delete (drops a write of the path not yet stored). */
  delete(path: string): PendingDelete {
    this.#budget.give(sizeOf(this.#ops.get(path)));
    const op: PendingDelete = { kind: 'delete', version: ++this.#version };
    this.#ops.delete(path);
    this.#ops.set(path, op);
    return op;
  }

  /**
   * Stores the op of `path` now (the writer waits for it when S3 is healthy); on a transient
   * failure it stays queued and the retries start; a refusal for good drops it (reported lost).
   */
  async flush(path: string): Promise<Outcome> {
    const op = this.#ops.get(path);
    if (!op || this.#inflight.has(path) || this.#closed) return 'queued';
    return this.#attempt(path, op);
  }

  async #attempt(path: string, op: PendingOp): Promise<Outcome> {
    this.#inflight.add(path);
    try {
      await this.#hooks.store(path, op);
      this.#settle(path, op);
      if (!this.#healthy) this.#hooks.health(true);
      this.#healthy = true;
      this.#delay = 0;
      return 'stored';
    } catch (err) {
      if (!isTransient(err)) {
        this.#settle(path, op);
        this.#hooks.lost(path, op, (err as Error)?.name ?? String(err));
        return 'lost';
      }
      if (this.#healthy) this.#hooks.health(false, err);
      this.#healthy = false;
      this.#schedule();
      return 'queued';
    } finally {
      this.#inflight.delete(path);
      // a newer op of the path arrived while this one was stored: it goes next
      if (this.#healthy && this.#ops.has(path) && !this.#closed) this.#schedule(0);
    }
  }

  /** Drops the op once stored, unless a newer one of the path replaced it meanwhile. */
  #settle(path: string, op: PendingOp): void {
    if (this.#ops.get(path) !== op) return;
    this.#ops.delete(path);
    this.#budget.give(sizeOf(op));
  }

  #schedule(ms?: number): void {
    if (this.#closed || this.#timer) return;
    if (ms === undefined) this.#delay = this.#delay ? Math.min(this.#delay * 2, BACKOFF.maxMs) : BACKOFF.firstMs;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#drain();
    }, ms ?? this.#delay);
    this.#timer.unref();
  }

  /** Stores queued ops, a few at a time, oldest first; stops at the first transient failure. */
  async #drain(): Promise<void> {
    if (this.#draining || this.#closed) return;
    this.#draining = true;
    try {
      while (!this.#closed && this.#ops.size > 0) {
        const batch = [...this.#ops].filter(([p]) => !this.#inflight.has(p)).slice(0, DRAIN_PARALLEL);
        if (batch.length === 0) break;
        await Promise.all(batch.map(([p, op]) => this.#attempt(p, op)));
        if (!this.#healthy) break;
      }
    } finally {
      this.#draining = false;
    }
  }

  /** Tries to store what is left within `ms`, then reports the rest as lost and stops retrying. */
  async close(ms: number): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const until = Date.now() + ms;
    while (this.#ops.size > 0 && this.#healthy && Date.now() < until) {
      const before = this.#ops.size;
      await this.#drain();
      if (this.#ops.size >= before) break;
    }
    this.#closed = true;
    for (const [path, op] of this.#ops) {
      this.#hooks.lost(path, op, 'the service stopped before S3 took it');
      this.#budget.give(sizeOf(op));
    }
    this.#ops.clear();
  }
}
