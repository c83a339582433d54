import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Receives one sample per tick: CPU in percent of ONE core (-1 while unknown: the first tick of a
 * pid has nothing to compare with) and the resident set size in bytes (-1 when the pid is gone).
 */
export type UsageListener = (cpuUsage: number, memoryBytes: number) => void;

export interface UsageSamplerOptions {
  /** Tick period; default 1000 ms (reference 7.3 samples every second). */
  intervalMs?: number;
  /** USER_HZ, the unit of utime/stime in /proc/<pid>/stat; 100 on every mainstream Linux. */
  clockTicks?: number;
  /** Where procfs is mounted; default /proc. */
  procRoot?: string;
  /** Bytes per memory page; default learnt from /proc/self at construction. */
  pageSize?: number;
  /** Monotonic clock in ms, for tests; default performance.now. */
  now?: () => number;
}

interface Watch {
  readonly listener: UsageListener;
  path: string;
  pid: number;
  /** Processes still to step down from `pid` to the program (the confinement's wrapper and init). */
  depth: number;
  /** Kept open: a pread at offset 0 regenerates the file, one syscall per sample instead of three. */
  fd: number;
  ticks: number;
  at: number;
}

const VM_RSS = Buffer.from('VmRSS:');

/**
 * Samples CPU and RSS of many children with ONE timer, reading /proc/<pid>/stat (utime, stime
 * and rss in pages; the page size is learnt once from /proc/self/status). The manager creates one
 * per app and hands it to every supervisor, so 100 processes cost one timer, not 100. The timer
 * runs only while something is watched. Reads are synchronous on purpose: procfs never touches a
 * disk, and a shared buffer avoids a promise and a Buffer per read.
 */
export class UsageSampler {
  readonly #intervalMs: number;
  readonly #clockTicks: number;
  readonly #procRoot: string;
  readonly #pageSize: number;
  readonly #now: () => number;
  readonly #watches = new Set<Watch>();
  readonly #buf = Buffer.allocUnsafe(4096);
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: UsageSamplerOptions = {}) {
    this.#intervalMs = opts.intervalMs ?? 1000;
    this.#clockTicks = opts.clockTicks ?? 100;
    this.#procRoot = opts.procRoot ?? '/proc';
    this.#pageSize = opts.pageSize ?? this.#learnPageSize();
    this.#now = opts.now ?? (() => performance.now());
  }

  get size(): number {
    return this.#watches.size;
  }

  /**
   * Calls `listener` every tick for `pid` until the returned function is called. With `depth`, the
   * program sampled is that many processes below `pid` (each level's first child): a child confined
   * with namespaces runs as the grandchild of the pid the service spawned (core/process/confine).
   * Until it is there the tick samples `pid` itself.
   */
  watch(pid: number, listener: UsageListener, depth = 0): () => void {
    const w: Watch = { listener, path: `${this.#procRoot}/${pid}/stat`, pid, depth, fd: -1, ticks: -1, at: 0 };
    this.#watches.add(w);
    if (!this.#timer) {
      this.#timer = setInterval(() => this.#tick(), this.#intervalMs);
      // The children keep the loop alive while they run; the sampler alone must not.
      this.#timer.unref();
    }
    return () => {
      if (!this.#watches.delete(w)) return;
      closeWatch(w);
      if (this.#watches.size === 0) this.#stopTimer();
    };
  }

  /** Forgets every watch and stops the timer. */
  close(): void {
    for (const w of this.#watches) closeWatch(w);
    this.#watches.clear();
    this.#stopTimer();
  }

  #stopTimer(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Steps down to the program once it exists (one read per level, only until found). */
  #descend(w: Watch): void {
    let pid = w.pid;
    for (let level = 0; level < w.depth; level++) {
      let text: string;
      try {
        text = readFileSync(`${this.#procRoot}/${pid}/task/${pid}/children`, 'latin1');
      } catch {
        return;
      }
      const next = Number.parseInt(text, 10);
      if (!(next > 0)) return;
      pid = next;
    }
    closeWatch(w);
    w.pid = pid;
    w.depth = 0;
    w.path = `${this.#procRoot}/${pid}/stat`;
    w.ticks = -1;
  }

  #tick(): void {
    for (const w of this.#watches) {
      if (w.depth > 0) this.#descend(w);
      let cpu = -1;
      let rss = -1;
      if (this.#readStat(w)) {
        const at = this.#now();
        if (w.ticks >= 0 && at > w.at) cpu = ((this.#ticks - w.ticks) / this.#clockTicks) / ((at - w.at) / 1000) * 100;
        w.ticks = this.#ticks;
        w.at = at;
        rss = this.#rssPages * this.#pageSize;
      }
      try {
        w.listener(cpu, rss);
      } catch {
        // A listener's failure must not starve the other children of their samples.
      }
    }
  }

  // Results of the last #readStat, kept in fields so that parsing allocates nothing.
  #ticks = 0;
  #rssPages = 0;

  /**
   * Parses utime + stime (fields 14, 15) and rss (field 24) of /proc/<pid>/stat. The comm field
   * may hold spaces and ')', so counting starts after the last ')'. False when the pid is gone.
   */
  #readStat(w: Watch): boolean {
    let n: number;
    try {
      if (w.fd < 0) w.fd = openSync(w.path, 'r');
      n = readSync(w.fd, this.#buf, 0, this.#buf.length, 0);
    } catch {
      return false;
    }
    const buf = this.#buf;
    const close = n > 0 ? buf.lastIndexOf(0x29, n - 1) : -1;
    if (close < 0) return false;
    let field = 2;
    let utime = 0;
    let stime = 0;
    let rss = 0;
    for (let i = close + 1; i < n; i++) {
      const c = buf[i]!;
      if (c === 0x20) {
        if (++field > 24) break;
      } else if (field === 14) {
        utime = utime * 10 + (c - 0x30);
      } else if (field === 15) {
        stime = stime * 10 + (c - 0x30);
      } else if (field === 24) {
        rss = rss * 10 + (c - 0x30);
      }
    }
    if (field < 24) return false;
    this.#ticks = utime + stime;
    this.#rssPages = rss;
    return true;
  }

  /** Bytes per page: our own VmRSS (kB, /proc/self/status) over our own rss in pages (stat). */
  #learnPageSize(): number {
    const self: Watch = { listener: () => {}, path: `${this.#procRoot}/self/stat`, pid: 0, depth: 0, fd: -1, ticks: -1, at: 0 };
    try {
      const pages = this.#readStat(self) ? this.#rssPages : 0;
      const status = readFileSync(`${this.#procRoot}/self/status`);
      const at = status.indexOf(VM_RSS);
      if (pages <= 0 || at < 0) return 4096;
      const kb = Number.parseInt(status.toString('latin1', at + VM_RSS.length, at + VM_RSS.length + 24).trim(), 10);
      // The two reads are moments apart; page sizes are powers of two, so round to the nearest.
      return 2 ** Math.round(Math.log2((kb * 1024) / pages));
    } catch {
      return 4096;
    } finally {
      closeWatch(self);
    }
  }
}

function closeWatch(w: Watch): void {
  if (w.fd < 0) return;
  try {
    closeSync(w.fd);
  } catch {
    // already closed
  }
  w.fd = -1;
}
