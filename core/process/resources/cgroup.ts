import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * The service's own cgroup, for the resource budget (issue 48.4): in a container or a systemd unit
 * with a CPU quota or a memory limit, "the whole machine" of `resources.max_cpu_usage` and
 * `max_memory_usage` is what the cgroup may use, as the reference's successor reads it (its
 * `cpu.max` / `cpu.cfs_quota_us`, `memory.max` / `memory.limit_in_bytes`). Both hierarchies:
 * cgroup v2 (`0::<path>` in /proc/self/cgroup) and v1 (`<n>:memory:<path>`, `<n>:cpu,cpuacct:<path>`).
 * The folder is the mount plus the path when it exists there (a host, a systemd unit), else the
 * mount itself (a container whose cgroup is mounted at its root). Memory in use leaves out the
 * inactive page cache (`inactive_file`), which the kernel gives back before it refuses anyone.
 * Pure parsers first, then the reader.
 */

/** `cpu.max` (v2): cores the quota allows (`150000 100000` -> 1.5); undefined for `max`. */
export function parseCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  return cores(Number(quota), Number(period ?? 100_000));
}

/** `cpu.cfs_quota_us` and `cpu.cfs_period_us` (v1): cores; undefined for `-1`. */
export function parseCfs(quota: string, period: string): number | undefined {
  return cores(Number(quota.trim()), Number(period.trim()));
}

const cores = (quota: number, period: number) => (Number.isFinite(quota) && quota > 0 && Number.isFinite(period) && period > 0 ? quota / period : undefined);

/** A memory limit in bytes; undefined for `max` (v2) or the "no limit" value v1 shows (about 2^63). */
export function parseMemoryLimit(text: string): number | undefined {
  const n = Number(text.trim());
  return Number.isFinite(n) && n > 0 && n < 2 ** 60 ? n : undefined;
}

/** One `key value` line of a `*.stat` file (`usage_usec`, `inactive_file`, `total_inactive_file`). */
export function statValue(text: string, key: string): number | undefined {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

/** /proc/self/cgroup: the v2 path and the v1 paths by controller. */
export function parseSelfCgroup(text: string): { v2?: string; v1: Record<string, string> } {
  const out: { v2?: string; v1: Record<string, string> } = { v1: {} };
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') out.v2 = m[3]!;
    else for (const c of m[2]!.split(',')) if (c) out.v1[c] = m[3]!;
  }
  return out;
}

/** What the cgroup says now; fields undefined where it sets no limit or has no file. */
export interface CgroupReading {
  /** Cores its CPU quota allows. */
  cpuCores?: number;
  /** CPU time its processes used, in seconds (with `cpuCores`). */
  cpuSeconds?: number;
  /** Its memory limit and what is in use of it, in bytes. */
  memoryLimit?: number;
  memoryUsed?: number;
}

export class Cgroup {
  readonly #proc: string;
  readonly #sys: string;

  /** `procRoot` (/proc) and `sysRoot` (/sys/fs/cgroup): a test gives folders of recorded files. */
  constructor(procRoot = '/proc', sysRoot = '/sys/fs/cgroup') {
    [this.#proc, this.#sys] = [procRoot, sysRoot];
  }

  read(): CgroupReading {
    let self: ReturnType<typeof parseSelfCgroup>;
    try {
      self = parseSelfCgroup(readFileSync(join(this.#proc, 'self/cgroup'), 'latin1'));
    } catch {
      return {};
    }
    const v2 = existsSync(join(this.#sys, 'cgroup.controllers'));
    return v2 ? this.#v2(self.v2 ?? '/') : this.#v1(self.v1);
  }

  #v2(path: string): CgroupReading {
    const dir = this.#dir(this.#sys, path);
    const out: CgroupReading = {};
    const cpu = this.#file(dir, 'cpu.max');
    out.cpuCores = cpu === undefined ? undefined : parseCpuMax(cpu);
    const usec = out.cpuCores === undefined ? undefined : statValue(this.#file(dir, 'cpu.stat') ?? '', 'usage_usec');
    out.cpuSeconds = usec === undefined ? undefined : usec / 1e6;
    out.memoryLimit = parseMemoryLimit(this.#file(dir, 'memory.max') ?? '');
    const current = out.memoryLimit === undefined ? undefined : Number(this.#file(dir, 'memory.current'));
    if (current !== undefined && Number.isFinite(current)) out.memoryUsed = Math.max(0, current - (statValue(this.#file(dir, 'memory.stat') ?? '', 'inactive_file') ?? 0));
    return out;
  }

  #v1(paths: Record<string, string>): CgroupReading {
    const out: CgroupReading = {};
    const cpuMount = ['cpu', 'cpu,cpuacct'].map((m) => join(this.#sys, m)).find((m) => existsSync(m));
    if (cpuMount && paths.cpu !== undefined) {
      const dir = this.#dir(cpuMount, paths.cpu);
      out.cpuCores = parseCfs(this.#file(dir, 'cpu.cfs_quota_us') ?? '', this.#file(dir, 'cpu.cfs_period_us') ?? '');
      const acct = this.#dir(join(this.#sys, 'cpuacct'), paths.cpuacct ?? paths.cpu);
      const ns = out.cpuCores === undefined ? NaN : Number(this.#file(acct, 'cpuacct.usage') ?? this.#file(dir, 'cpuacct.usage'));
      out.cpuSeconds = Number.isFinite(ns) ? ns / 1e9 : undefined;
    }
    if (paths.memory !== undefined) {
      const dir = this.#dir(join(this.#sys, 'memory'), paths.memory);
      out.memoryLimit = parseMemoryLimit(this.#file(dir, 'memory.limit_in_bytes') ?? '');
      const usage = out.memoryLimit === undefined ? NaN : Number(this.#file(dir, 'memory.usage_in_bytes'));
      if (Number.isFinite(usage)) out.memoryUsed = Math.max(0, usage - (statValue(this.#file(dir, 'memory.stat') ?? '', 'total_inactive_file') ?? 0));
    }
    return out;
  }

  /** The cgroup's folder under `mount`: the path when it is there, else the mount itself (a container's own view). */
  #dir(mount: string, path: string): string {
    const full = join(mount, path);
    return path !== '/' && existsSync(full) ? full : mount;
  }

  #file(dir: string, name: string): string | undefined {
    try {
      return readFileSync(join(dir, name), 'latin1');
    } catch {
      return undefined;
    }
  }
}
