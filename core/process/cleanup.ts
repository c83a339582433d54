import type { Logger } from 'pino';
import { findFilesystem, globMatcher, type FilesystemService, type FsFileInfo } from '../../sdk/index.ts';
import { ListingIndex } from './cleanup-index.ts';
import type { CleanupRule } from './config-model.ts';

/*
 * Output cleanup rules (reference 9): `<fs>:<glob>` patterns with `max_files` and
 * `max_file_age_seconds`, enforced every second, and `purge_on_delete` when the process goes.
 * Rules are registered for every process (running or not) and removed on delete and update.
 */

const PREFIX = /^([a-z]+):(.+)$/s;

interface Rule extends CleanupRule {
  fs: string;
  glob: string;
  /** The glob compiled at the rule's first tick, kept with the rule and gone with it. */
  match?: (path: string) => boolean;
}

/**
 * `memfs:/x_*.ts` -> `{ fs: 'memfs', glob: '/x_*.ts' }`; undefined without a prefix. The name is
 * looked up in the filesystem registry when the rule runs, by name or alias (`memfs` is the
 * `mem` filesystem's alias), so a vendor's filesystem works and one mounted later is found.
 */
export function parsePattern(pattern: string): { fs: string; glob: string } | undefined {
  const m = PREFIX.exec(pattern);
  if (!m) return undefined;
  return { fs: m[1]!, glob: m[2]! };
}

/** Oldest first; names compare numerically so `x_9.ts` comes before `x_10.ts` within one second. */
function byAge(a: FsFileInfo, b: FsFileInfo): number {
  return a.last_modified - b.last_modified || a.name.localeCompare(b.name, 'en', { numeric: true });
}

export class CleanupRunner {
  readonly #rules = new Map<string, Rule[]>();
  /** Processes with a rule that needs the timer (max_files or max_file_age_seconds). */
  readonly #timed = new Set<string>();
  readonly #filesystems: () => readonly FilesystemService[];
  readonly #log: Logger;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  /** Second purges, by process (see unset). */
  readonly #late = new Map<string, NodeJS.Timeout>();

  readonly #latePurgeMs: number;

  constructor(filesystems: () => readonly FilesystemService[], log: Logger, intervalMs = 1000, latePurgeMs = 2000) {
    this.#filesystems = filesystems;
    this.#log = log;
    this.#intervalMs = intervalMs;
    this.#latePurgeMs = latePurgeMs;
  }

  /** Replaces the rules of a process (patterns already resolved). */
  set(pid: string, rules: readonly CleanupRule[]): void {
    this.#cancelLate(pid);
    const parsed: Rule[] = [];
    for (const r of rules) {
      const p = parsePattern(r.pattern);
      if (p) parsed.push({ ...r, ...p });
    }
    if (parsed.length) this.#rules.set(pid, parsed);
    else this.#rules.delete(pid);
    if (parsed.some((r) => r.max_files > 0 || r.max_file_age_seconds > 0)) this.#timed.add(pid);
    else this.#timed.delete(pid);
    this.#schedule();
  }

  /**
   * Removes a process's rules; with `purge`, deletes the files of its `purge_on_delete` rules,
   * and once more after `latePurgeMs` unless the process is back by then: a stopped encoder's
   * last HTTP upload (the final playlist) can reach the filesystem after it exited.
   */
  async unset(pid: string, purge: boolean): Promise<void> {
    const rules = this.#rules.get(pid) ?? [];
    this.#rules.delete(pid);
    this.#timed.delete(pid);
    this.#schedule();
    if (!purge) return;
    const purging = rules.filter((x) => x.purge_on_delete);
    await this.#purge(purging);
    if (!purging.length) return;
    this.#cancelLate(pid);
    const t = setTimeout(() => {
      this.#late.delete(pid);
      if (!this.#rules.has(pid)) void this.#purge(purging);
    }, this.#latePurgeMs);
    t.unref();
    this.#late.set(pid, t);
  }

  #cancelLate(pid: string): void {
    const t = this.#late.get(pid);
    if (t) clearTimeout(t);
    this.#late.delete(pid);
  }

  async #purge(rules: readonly Rule[]): Promise<void> {
    for (const r of rules) {
      const fs = this.#fs(r.fs);
      if (!fs) continue;
      try {
        const files = (await fs.list(r.glob)).sort((a, b) => b.name.length - a.name.length);
        for (const f of files) await fs.deleteFile(f.name);
      } catch (err) {
        this.#log.warn({ err, pattern: r.pattern }, 'purge failed');
      }
    }
  }

  /**
   * Enforces every rule once: each filesystem is listed once per tick and every rule picks its
   * files from that listing (cleanup-index.ts), so thousands of rules do not list thousands of
   * times. Rules of a filesystem with no file cost nothing.
   */
  async tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      const now = Date.now() / 1000;
      const listings = new Map<string, { fs: FilesystemService; index: ListingIndex } | null>();
      let n = 0;
      for (const rules of [...this.#rules.values()]) {
        for (const r of rules) {
          if (r.max_files <= 0 && r.max_file_age_seconds <= 0) continue;
          let l = listings.get(r.fs);
          if (l === undefined) listings.set(r.fs, l = await this.#listing(r.fs));
          if (!l || l.index.size === 0) continue;
          // matching is synchronous: without a real yield, thousands of rules would hold the event loop
          if (++n % 64 === 0) await new Promise((res) => setImmediate(res));
          await this.#enforce(l.fs, r, l.index.match(r.glob, r.match ??= globMatcher(r.glob)), now);
        }
      }
    } finally {
      this.#busy = false;
    }
  }

  /** One sorted listing of a filesystem (by name or alias), or null when it is not mounted or fails. */
  async #listing(name: string): Promise<{ fs: FilesystemService; index: ListingIndex } | null> {
    const fs = this.#fs(name);
    if (!fs) return null;
    try {
      return { fs, index: new ListingIndex(await fs.list()) };
    } catch (err) {
      this.#log.warn({ err, filesystem: name }, 'cleanup listing failed');
      return null;
    }
  }

  async #enforce(fs: FilesystemService, r: Rule, matched: FsFileInfo[], now: number): Promise<void> {
    try {
      let files = matched.sort(byAge);
      if (r.max_file_age_seconds > 0) {
        const limit = now - r.max_file_age_seconds;
        const old = files.filter((f) => f.last_modified < limit);
        for (const f of old) await fs.deleteFile(f.name);
        if (old.length) files = files.filter((f) => f.last_modified >= limit);
      }
      if (r.max_files > 0 && files.length > r.max_files) {
        for (const f of files.slice(0, files.length - r.max_files)) await fs.deleteFile(f.name);
      }
    } catch (err) {
      this.#log.warn({ err, pattern: r.pattern }, 'cleanup failed');
    }
  }

  #fs(name: string): FilesystemService | undefined {
    return findFilesystem(this.#filesystems(), name);
  }

  /** The timer only runs while some rule has something to enforce. */
  #schedule(): void {
    const needed = this.#timed.size > 0;
    if (needed && !this.#timer) {
      this.#timer = setInterval(() => { void this.tick(); }, this.#intervalMs);
      this.#timer.unref();
    } else if (!needed && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#rules.clear();
    this.#timed.clear();
    for (const t of this.#late.values()) clearTimeout(t);
    this.#late.clear();
  }
}
