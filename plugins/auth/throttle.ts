/** What one login attempt came to. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; error: Error };

interface Entry {
  failures: number;
  lastFailure: number;
  /** Settles when the address's previous attempt (including its penalty) is over. */
  tail: Promise<void>;
  pending: number;
}

export interface ThrottleOptions {
  baseMs: number;
  maxMs: number;
  forgetMs: number;
  maxEntries: number;
  maxPending: number;
}

/**
 * Slows failed logins per client address, never globally. The attempts of one address run one
 * after the other, and a failure holds the address's queue (and the failing response) for a
 * delay that doubles with every failure, so parallel guessing from one address gains nothing,
 * while other addresses are not touched. State is bounded: idle addresses are forgotten after
 * `forgetMs`, the least recently seen go first beyond `maxEntries`.
 */
export class LoginThrottle {
  readonly #entries = new Map<string, Entry>();
  readonly #sleeps = new Set<{ timer: NodeJS.Timeout; done: () => void }>();
  readonly #opts: ThrottleOptions;
  readonly #pruner: NodeJS.Timeout;
  #closed = false;

  constructor(opts: ThrottleOptions) {
    this.#opts = opts;
    this.#pruner = setInterval(() => this.prune(), Math.min(60_000, opts.forgetMs)).unref();
  }

  /** The delay after the n-th consecutive failure. */
  delay(failures: number): number {
    if (failures <= 0) return 0;
    return Math.min(this.#opts.maxMs, this.#opts.baseMs * 2 ** Math.min(failures - 1, 30));
  }

  failures(address: string): number {
    return this.#entries.get(address)?.failures ?? 0;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Runs one attempt in the address's queue; `tooMany` answers when the queue is full. */
  async run<T>(address: string, attempt: () => Promise<Attempt<T>>, tooMany: () => Error): Promise<Attempt<T>> {
    const e = this.#touch(address);
    if (e.pending >= this.#opts.maxPending) return { ok: false, error: tooMany() };
    e.pending++;
    const prev = e.tail;
    let release!: () => void;
    e.tail = new Promise<void>((r) => { release = r; });
    try {
      await prev;
      const out = await attempt().catch((error: Error): Attempt<T> => ({ ok: false, error }));
      if (out.ok) {
        e.failures = 0;
      } else {
        e.failures++;
        e.lastFailure = Date.now();
        await this.#sleep(this.delay(e.failures));
      }
      return out;
    } finally {
      e.pending--;
      release();
      if (e.pending === 0 && e.failures === 0 && this.#entries.get(address) === e) this.#entries.delete(address);
    }
  }

  /** Forgets idle addresses whose last failure is older than `forgetMs`. */
  prune(now = Date.now()): void {
    for (const [address, e] of this.#entries) {
      if (e.pending === 0 && now - e.lastFailure >= this.#opts.forgetMs) this.#entries.delete(address);
    }
  }

  /** Stops the pruner and lets every waiting attempt finish at once. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#pruner);
    for (const s of this.#sleeps) { clearTimeout(s.timer); s.done(); }
    this.#sleeps.clear();
    this.#entries.clear();
  }

  #touch(address: string): Entry {
    let e = this.#entries.get(address);
    if (e) {
      // re-insert: Map order is then least recently seen first
      this.#entries.delete(address);
    } else {
      e = { failures: 0, lastFailure: 0, tail: Promise.resolve(), pending: 0 };
      this.#evict();
    }
    this.#entries.set(address, e);
    return e;
  }

  #evict(): void {
    if (this.#entries.size < this.#opts.maxEntries) return;
    for (const [address, e] of this.#entries) {
      if (this.#entries.size < this.#opts.maxEntries) break;
      if (e.pending === 0) this.#entries.delete(address);
    }
  }

  #sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      const s = { timer: setTimeout(() => { this.#sleeps.delete(s); resolve(); }, ms), done: resolve };
      this.#sleeps.add(s);
    });
  }
}
