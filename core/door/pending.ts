/** How long a read that misses waits for an upload of its path in progress (then the 404). */
export const PENDING_WAIT_MS = 3000;
/** An upload announced this long ago without an end is forgotten (a thread that died mid-upload). */
const STALE_MS = 60_000;

interface Pending {
  n: number;
  since: number;
  waiters: Array<() => void>;
}

/**
 * Paths with an upload in progress, on main or on a serving thread, so that a read that misses
 * can wait for the file instead of answering 404. With serving threads ffmpeg's uploads reach
 * main over different loops and channels: a playlist taken on main may be stored a moment before
 * the segment it lists, received whole on a thread, whose commit is still on its way (ffmpeg does
 * not wait for the answers of its PUTs). A viewer that asks for that segment in that moment gets
 * it once it is stored. Never a delay for a file that exists, nor for a path nobody is writing.
 */
export class PendingUploads {
  readonly #paths = new Map<string, Pending>();

  begin(path: string): void {
    const p = this.#paths.get(path);
    if (p) {
      p.n++;
      p.since = Date.now();
    } else this.#paths.set(path, { n: 1, since: Date.now(), waiters: [] });
  }

  /** Ends one upload of `path` (stored, refused or abandoned); readers waiting look again. */
  end(path: string): void {
    const p = this.#paths.get(path);
    if (!p || --p.n > 0) return;
    this.#paths.delete(path);
    for (const w of p.waiters) w();
  }

  has(path: string): boolean {
    const p = this.#paths.get(path);
    if (!p) return false;
    if (Date.now() - p.since <= STALE_MS) return true;
    this.#paths.delete(path);
    for (const w of p.waiters) w();
    return false;
  }

  /** Resolves once no upload of `path` is in progress, or after `ms`. */
  settled(path: string, ms = PENDING_WAIT_MS): Promise<void> {
    const p = this.#paths.get(path);
    if (!p) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        const i = p!.waiters.indexOf(done);
        if (i >= 0) p!.waiters.splice(i, 1);
        resolve();
      }
      p.waiters.push(done);
    });
  }
}
