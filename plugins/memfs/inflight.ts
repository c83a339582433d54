import { memfsErrors } from './errors.ts';

/** Bytes in flight allowed at once when memfs has no limit (documented in the README). */
export const UNLIMITED_INFLIGHT_CAP = 256 * 1024 * 1024;

/** What the capacity check needs from the filesystem. */
export interface Capacity {
  /** Bytes held by stored files. */
  used(): number;
  /** Size of the file an upload to `path` replaces (freed when it commits). */
  replaced(path: string): number;
  /** Drops the oldest files (not `keep`) until `need` bytes are free; returns the bytes freed. */
  purge(need: number, keep: string): number;
}

/**
 * The bytes of all uploads in progress, counted against the limit as they arrive: stored files
 * plus bytes in flight never exceed the limit (with purge, the oldest files make room, but only
 * when that is enough), and without a limit the bytes in flight are capped, so memory stays
 * bounded whatever clients send.
 */
export class Inflight {
  readonly #limit: number;
  readonly #purge: boolean;
  readonly #cap: number;
  readonly #fs: Capacity;
  /** Uploads in progress per path: a file being replaced is credited to one of them only. */
  readonly #paths = new Map<string, number>();
  #bytes = 0;

  constructor(fs: Capacity, opts: { limit: number; purge: boolean; cap?: number }) {
    this.#fs = fs;
    this.#limit = opts.limit;
    this.#purge = opts.purge;
    this.#cap = opts.cap ?? (opts.limit > 0 ? opts.limit : UNLIMITED_INFLIGHT_CAP);
  }

  /** Bytes in flight. */
  get bytes(): number {
    return this.#bytes;
  }

  begin(path: string): void {
    this.#paths.set(path, (this.#paths.get(path) ?? 0) + 1);
  }

  /** Ends an upload: its reservation is given back (a commit then counts the file instead). */
  end(path: string, reserved: number): void {
    this.#bytes -= reserved;
    const n = (this.#paths.get(path) ?? 1) - 1;
    if (n > 0) this.#paths.set(path, n);
    else this.#paths.delete(path);
  }

  /** Takes `n` more bytes for an upload to `path` that will hold `total`; 507 when they do not fit. */
  reserve(path: string, n: number, total: number): void {
    if (total > this.#cap || (this.#limit > 0 && total > this.#limit)) throw memfsErrors.tooBig();
    const inflight = this.bytes;
    if (inflight + n > this.#cap) throw memfsErrors.full();
    if (this.#limit > 0) {
      const credit = this.#paths.get(path) === 1 ? this.#fs.replaced(path) : 0;
      const over = this.#fs.used() - credit + inflight + n - this.#limit;
      if (over > 0) {
        // purge only when it makes enough room: never drop files for a write that fails anyway
        if (!this.#purge || this.#fs.used() - this.#fs.replaced(path) < over) throw memfsErrors.full();
        this.#fs.purge(over, path);
      }
    }
    this.#bytes += n;
  }
}
