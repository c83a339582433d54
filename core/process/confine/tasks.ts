import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseSelfCgroup } from '../resources/cgroup.ts';

/*
 * A bound on what one child may start, threads included (`encoder.confinement.max_tasks`): a
 * service run as root is exempt from RLIMIT_NPROC, and `-threads 100000` made 13,274 threads in
 * 10 s. Each confined child gets a cgroup of its own with the pids controller's `pids.max` (the
 * kernel counts every thread and process of it, and a fork or thread beyond fails with EAGAIN);
 * the wrapper joins it before anything else (`--tasks`), the service removes it after the exit.
 * Where the service's cgroup is: cgroup v1's `pids` hierarchy, or v2 where the pids controller can
 * be given to sub-cgroups (the namespace's root cgroup, a delegated one). Elsewhere children run
 * without the bound and the start-up log says why. Named `media-core-<service pid>-<n>`; those of a
 * service that is gone are removed at the next start.
 */

/** Where the service's own pids cgroup lies, or why none can be used. Pure over what is read. */
export function pidsFolder(selfCgroup: string, mount = '/sys/fs/cgroup', exists: (p: string) => boolean = existsSync): { dir: string; v2: boolean } | { reason: string } {
  const self = parseSelfCgroup(selfCgroup);
  const v1 = self.v1.pids;
  if (v1 !== undefined) {
    const base = join(mount, 'pids');
    const dir = trimmed(join(base, v1));
    if (exists(join(dir, 'cgroup.procs'))) return { dir, v2: false };
    if (exists(join(base, 'cgroup.procs'))) return { dir: base, v2: false };
    return { reason: `no pids hierarchy at ${base}` };
  }
  if (self.v2 !== undefined) {
    const dir = trimmed(join(mount, self.v2));
    if (exists(join(dir, 'cgroup.controllers'))) return { dir, v2: true };
    if (exists(join(mount, 'cgroup.controllers'))) return { dir: mount, v2: true };
  }
  return { reason: 'no cgroup with the pids controller' };
}

const trimmed = (p: string) => (p.length > 1 ? p.replace(/\/+$/, '') : p);

let made = 0;

/** One child's cgroup: the file the wrapper writes its pid to, and its removal once the child exited. */
export interface TaskGroup { procs: string; remove(): void }

export class TaskCgroups {
  readonly #dir: string;
  readonly #max: number;

  private constructor(dir: string, max: number) {
    [this.#dir, this.#max] = [dir, max];
  }

  /**
   * The cgroups for children of at most `max` tasks each, or why there are none here: one is made
   * and removed to be sure (v2: the pids controller given to sub-cgroups first).
   */
  static open(max: number, mount = '/sys/fs/cgroup'): TaskCgroups | { reason: string } {
    let where: ReturnType<typeof pidsFolder>;
    try {
      where = pidsFolder(readFileSync('/proc/self/cgroup', 'utf8'), mount);
    } catch (err) {
      return { reason: (err as Error).message };
    }
    if ('reason' in where) return where;
    try {
      if (where.v2 && !readFileSync(join(where.dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) {
        writeFileSync(join(where.dir, 'cgroup.subtree_control'), '+pids');
      }
      const t = new TaskCgroups(where.dir, max);
      t.sweep();
      t.make().remove();
      return t;
    } catch (err) {
      return { reason: `${where.dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
    }
  }

  /** A new child's cgroup with its bound (`max`, else the service's; throws when it cannot be made). */
  make(max = this.#max): TaskGroup {
    const dir = join(this.#dir, `media-core-${process.pid}-${++made}`);
    mkdirSync(dir);
    try {
      writeFileSync(join(dir, 'pids.max'), String(max));
    } catch (err) {
      rmdirSync(dir);
      throw err;
    }
    let left = 40;
    const remove = (): void => {
      try {
        rmdirSync(dir);
      } catch (err) {
        // tasks of the child still exiting: again a little later, then left to the next start's sweep
        if ((err as NodeJS.ErrnoException).code === 'EBUSY' && --left > 0) setTimeout(remove, 50).unref();
      }
    };
    return { procs: join(dir, 'cgroup.procs'), remove };
  }

  /** Removes the empty cgroups of services that are gone. */
  sweep(): void {
    for (const name of readdirSync(this.#dir)) {
      const m = /^media-core-(\d+)-\d+$/.exec(name);
      if (!m || alive(Number(m[1]))) continue;
      try { rmdirSync(join(this.#dir, name)); } catch { /* tasks still in it: left */ }
    }
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
