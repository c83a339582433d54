import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ApiError, type ChildSpawnOptions, type ChildrenService, type Confinement } from '../../../sdk/index.ts';
import type { Mechanism } from './mechanism.ts';
import { atOrBeneath, beneath } from './paths.ts';
import { around, pathRules, ruleArgs, type DirEntryKind, type Lister, type PathRules } from './policy.ts';
import { TaskCgroups, type TaskGroup } from './tasks.ts';

export interface ChildrenOptions {
  mechanism: Mechanism;
  /** `encoder.confinement.require`: refuse to start children unconfined. */
  require: boolean;
  /**
   * The service's secrets: config file, `db.dir`, TLS files (and, run as root, what only root may
   * read). A function is called once, at the first confined spawn: a start with no child to run
   * does not walk the filesystem for them (issue 46.4).
   */
  hidden: readonly string[] | (() => readonly string[]);
  /** The disk filesystem's root (first: `ChildSpawnOptions.disk` narrows it) and `encoder.confinement.writable`. */
  writable: readonly string[];
  /** Where the private temporary folders are made (inside `db.dir`, so hidden from every other child). */
  tmpBase: string;
  /** `encoder.confinement.modules` (real path): where module filters search, or '' for none. */
  modules?: string;
  /** `encoder.confinement.max_tasks`: threads and processes one child may have at once (0: no bound). */
  maxTasks?: number;
  /** Told once why the bound cannot be kept here (no pids cgroup). */
  warn?: (message: string) => void;
}


/** `realpath`, or of the nearest existing ancestor joined to the rest (a secret not created yet). */
export function realPath(p: string): string {
  const abs = resolve(p);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realPath(parent), basename(abs));
  }
}

const listDir: Lister = (dir) => {
  try {
    return readdirSync(dir, { withFileTypes: true }).map((d): DirEntryKind => ({
      name: d.name, kind: d.isSymbolicLink() ? 'link' : d.isDirectory() ? 'dir' : 'other',
    }));
  } catch {
    return undefined;
  }
};

/** What of the disk root a narrowed child reaches (real paths): read (not run), read and written, written only. */
interface Narrowed { root: string; read: string[]; write: string[]; writeOnly: string[] }

/** The core's `childrenRef`: every program the service starts goes through `spawn`. */
export class Children implements ChildrenService {
  readonly confinement: Confinement;
  readonly #opts: ChildrenOptions;
  #hidden: string[] | undefined;
  readonly #writable: string[];
  readonly #env: Record<string, string>;
  #tasks: TaskCgroups | null | undefined;

  constructor(opts: ChildrenOptions) {
    this.#opts = opts;
    this.confinement = { mechanism: opts.mechanism.mechanism, detail: opts.mechanism.detail, programDepth: opts.mechanism.ns ? 2 : 0 };
    if (typeof opts.hidden !== 'function') this.#hidden = opts.hidden.map(realPath);
    this.#writable = opts.writable.map(realPath);
    const m = opts.modules;
    // module filters search only the operator's folder (core/process/modules.ts); HOME is never set
    this.#env = m ? { LADSPA_PATH: m, LV2_PATH: m, FREI0R_PATH: m } : {};
  }

  /** The children's task cgroups, made at the first confined spawn; undefined where there are none. */
  #taskGroups(): TaskCgroups | undefined {
    if (this.#tasks === undefined) {
      const max = this.#opts.maxTasks ?? 0;
      const t = max > 0 ? TaskCgroups.open(max) : undefined;
      if (t && 'reason' in t) this.#opts.warn?.(`children's threads and processes are not bounded (encoder.confinement.max_tasks): ${t.reason}`);
      this.#tasks = t instanceof TaskCgroups ? t : null;
    }
    return this.#tasks ?? undefined;
  }

  #hiddenPaths(): string[] {
    const h = this.#opts.hidden;
    return (this.#hidden ??= (typeof h === 'function' ? h() : h).map(realPath));
  }

  /**
   * What of the disk root (the first writable folder) a child narrowed to `d` reaches: real paths
   * beneath it (others dropped), folders to write made; undefined when `d` grants the whole root
   * to write (no narrowing). A folder to write that is not also to read is written only.
   */
  #narrowed(d: NonNullable<ChildSpawnOptions['disk']>): Narrowed | undefined {
    const root = this.#writable[0];
    if (root === undefined) return undefined;
    const write: string[] = [];
    for (const given of d.write) {
      let p = realPath(given);
      if (p === root) return undefined;
      if (!atOrBeneath(root, p)) continue;
      // a folder (given with its closing `/`) is made when missing, and then resolved again; a file is granted only as it is
      if (given.endsWith('/')) {
        try {
          mkdirSync(p, { recursive: true });
        } catch {
          continue;
        }
        p = realPath(p);
        if (!beneath(root, p)) continue;
      }
      write.push(p);
    }
    const readable = d.read.map(realPath).filter((p) => atOrBeneath(root, p));
    const mayRead = (p: string) => readable.some((r) => atOrBeneath(r, p));
    return {
      root,
      read: readable.filter((p) => !write.some((w) => atOrBeneath(w, p) && mayRead(w))),
      write: write.filter(mayRead),
      writeOnly: write.filter((w) => !mayRead(w)),
    };
  }

  /** The rules of a child narrowed to `disk` of the root: the root hidden, its granted paths added, a writable folder holding it granted around it. */
  #narrowRules(disk: Narrowed, tmp: string): PathRules {
    const others = this.#writable.slice(1).flatMap((w) => (beneath(w, disk.root) ? around(w, disk.root, listDir) : [w]));
    const rules = pathRules({ hidden: [...this.#hiddenPaths(), disk.root], writable: [...others, ...disk.write, tmp] }, listDir);
    return { ...rules, rd: disk.read, wo: disk.writeOnly };
  }

  /** Removes private folders a killed service left behind; call once per OS process, before any child. */
  sweep(): void {
    rmSync(this.#opts.tmpBase, { recursive: true, force: true });
  }

  spawn(file: string, args: readonly string[], o: ChildSpawnOptions = {}): ChildProcess {
    const base = { stdio: o.stdio ?? ['ignore', 'ignore', 'pipe'], detached: o.detached, signal: o.signal, killSignal: o.killSignal ?? 'SIGKILL' } as const;
    const wrapper = this.#opts.mechanism.wrapper;
    if (!wrapper) {
      if (this.#opts.require) {
        throw new ApiError(503, 'children cannot be confined here and encoder.confinement.require is on', [this.confinement.detail], 'PROCESS_UNCONFINED');
      }
      return spawn(file, args, { ...base, env: o.env ?? {} });
    }
    mkdirSync(this.#opts.tmpBase, { recursive: true, mode: 0o700 });
    // a real path: the wrapper grants a writable path only when no link is on it
    const tmp = realPath(mkdtempSync(join(this.#opts.tmpBase, 'child-')));
    let child: ChildProcess;
    let group: TaskGroup | undefined;
    try {
      // computed at each spawn: a file the service made for this child just now (a playout clip's
      // image in its temporary folder) is readable even in a folder on the way to a secret
      const disk = o.disk && this.#narrowed(o.disk);
      const rules = disk ? this.#narrowRules(disk, tmp) : pathRules({ hidden: this.#hiddenPaths(), writable: [...this.#writable, tmp] }, listDir);
      // a child of no bound of its own (0: the service's own hosts) gets no group
      group = o.maxTasks === 0 ? undefined : this.#taskGroups()?.make(o.maxTasks);
      const tasks = group ? ['--tasks', group.procs] : [];
      // a narrowed root stays noexec as a whole (its granted folders are in the rules)
      const nx = disk ? ['--nx', disk.root] : [];
      const argv = ['--ppid', String(process.pid), ...(this.#opts.mechanism.ns ? ['--ns'] : []), ...tasks, ...nx, ...ruleArgs(rules), '--', file, ...args];
      child = spawn(wrapper, argv, { ...base, env: { ...o.env, ...this.#env, TMPDIR: tmp } });
    } catch (err) {
      rmSync(tmp, { recursive: true, force: true });
      group?.remove();
      throw err;
    }
    let removed = false;
    const remove = () => {
      if (removed) return;
      removed = true;
      group?.remove();
      void rm(tmp, { recursive: true, force: true }).catch(() => {});
    };
    child.once('exit', remove);
    child.once('error', () => { if (child.pid === undefined) remove(); });
    return child;
  }
}
