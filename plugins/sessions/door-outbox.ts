import type { CopyBatch, Registration } from './door-wire.ts';

/** A batch holds at most this many sessions' bytes; more are sent at once. */
const MAX_TX = 4096;

/**
 * What one copy of the door tap tells main, gathered into one `CopyBatch`: on main at once (its
 * `send` is synchronous), in a thread at most every `flushMs` (bytes summed per session).
 */
export class Outbox {
  readonly #send: (batch: CopyBatch) => void;
  readonly #immediate: boolean;
  readonly #flushMs: number;
  #reg: Registration[] = [];
  #res = new Map<number, number>();
  #tx = new Map<string, [number, 0 | 1]>();
  #lim: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(send: (batch: CopyBatch) => void, immediate: boolean, flushMs: number) {
    this.#send = send;
    this.#immediate = immediate;
    this.#flushMs = flushMs;
  }

  /** A new viewer, with the place it reserved in the slot of `second` (none without `max_sessions`). */
  register(reg: Registration, second: number | undefined): void {
    this.#reg.push(reg);
    if (second !== undefined) this.#res.set(second, (this.#res.get(second) ?? 0) + 1);
    // at once (one per viewer): the other copies learn the id from main as soon as possible, and
    // bytes other copies report for it find it registered
    this.flush();
  }

  /** Bytes sent for a session; `segment` 1 activates it. */
  egress(id: string, bytes: number, segment: 0 | 1): void {
    if (this.#immediate) {
      // main's copy, once per answer: no gathering
      this.#send({ t: 'batch', tx: [[id, bytes, segment]] });
      return;
    }
    const e = this.#tx.get(id);
    if (e) {
      e[0] += bytes;
      if (segment) e[1] = 1;
    } else {
      this.#tx.set(id, [bytes, segment]);
    }
    if (this.#tx.size >= MAX_TX) this.flush();
    else this.#soon();
  }

  /** A run of refusals started in this copy. */
  limit(reason: string): void {
    this.#lim ??= reason;
    this.#soon();
  }

  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch: CopyBatch = { t: 'batch' };
    if (this.#reg.length) batch.reg = this.#reg;
    if (this.#res.size) batch.res = [...this.#res];
    if (this.#tx.size) batch.tx = [...this.#tx].map(([id, [bytes, seg]]) => [id, bytes, seg]);
    if (this.#lim !== undefined) batch.lim = this.#lim;
    this.#reg = [];
    this.#res = new Map();
    this.#tx = new Map();
    this.#lim = undefined;
    if (batch.reg || batch.res || batch.tx || batch.lim !== undefined) this.#send(batch);
  }

  /** Sends what is left; nothing is gathered after. */
  close(): void {
    this.flush();
    this.#closed = true;
  }

  #soon(): void {
    if (this.#immediate || this.#closed) {
      this.flush();
      return;
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), this.#flushMs);
    this.#timer.unref();
  }
}
