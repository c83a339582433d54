import type { FsFileInfo } from '../../sdk/index.ts';

/** How often the bucket is listed for `filesystem_usage`/`_files`: soon after changes, else rarely. */
export const SCAN = { afterChangeMs: 5_000, idleMs: 60_000 };

/**
 * The bytes and objects of a bucket for the `filesystem_*` metrics, which read `usage()`
 * synchronously: a background listing (unref'd timer, one at a time, failures keep the last
 * figures) refreshes them, so a metrics tick never waits for S3.
 */
export class UsageScan {
  current = { used: 0, files: 0 };
  /** Unix ms of the last successful scan (0: none yet). */
  at = 0;
  readonly #list: () => Promise<FsFileInfo[]>;
  #timer: NodeJS.Timeout | undefined;
  #dirty = true;
  #running = false;
  #stopped = false;
  /** When the armed timer fires (ms). */
  #due = 0;

  constructor(list: () => Promise<FsFileInfo[]>) {
    this.#list = list;
  }

  start(): void {
    this.#arm(0);
  }

  /** A write or delete happened: scan again within `afterChangeMs`. */
  changed(): void {
    this.#dirty = true;
    if (this.#timer && !this.#running && this.#due > Date.now() + SCAN.afterChangeMs) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#arm(SCAN.afterChangeMs);
    }
  }

  #arm(ms: number): void {
    if (this.#stopped || this.#timer) return;
    this.#due = Date.now() + ms;
    this.#timer = setTimeout(() => void this.#run(), ms);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    this.#timer = undefined;
    this.#running = true;
    this.#dirty = false;
    try {
      const all = await this.#list();
      this.current = { used: all.reduce((n, f) => n + f.size_bytes, 0), files: all.length };
      this.at = Date.now();
    } catch {
      this.#dirty = true;
    } finally {
      this.#running = false;
      this.#arm(this.#dirty ? SCAN.afterChangeMs : SCAN.idleMs);
    }
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
