import { closeSync, openSync, readFileSync, readSync, statfsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { MetricCollector, MetricDescription, MetricValue } from '../api.ts';
import {
  parseCfsQuota, parseCpuMax, parseMeminfo, parseMemoryLimit, parseNetDev, parseProcStat, type CpuTimes,
} from './proc-parse.ts';

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});
/** How old the cgroup's memory limit may be. */
const LIMIT_MAX_AGE_MS = 30_000;
/** Interfaces whose label objects are kept; more, and the kept ones are made again. */
const MAX_NET_LABELS = 256;

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** One buffer for every kept file's read (a sample reads them one after the other, synchronously); /proc/stat of a big machine is tens of KB. */
const KEPT_BYTES = 64 * 1024;
let keptBuffer: Buffer | undefined;

/**
 * A /proc or cgroup file the collector reads every sample: kept open and read again from its start
 * (the kernel makes its text anew for each read at offset 0), one system call and no file-system
 * code per read: an idle service's samples are most of its CPU (issue 46.2). Text longer than the
 * buffer (a machine with hundreds of interfaces) is read whole the ordinary way.
 */
class KeptFile {
  readonly #path: string;
  /** null: could not be opened (read the ordinary way, which answers undefined for a missing file). */
  #fd: number | null | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  read(): string | undefined {
    if (this.#fd === undefined) {
      try {
        this.#fd = openSync(this.#path, 'r');
      } catch {
        this.#fd = null;
      }
    }
    if (this.#fd === null) return read(this.#path);
    const buf = (keptBuffer ??= Buffer.allocUnsafe(KEPT_BYTES));
    try {
      const n = readSync(this.#fd, buf, 0, KEPT_BYTES, 0);
      return n < KEPT_BYTES ? buf.toString('latin1', 0, n) : read(this.#path);
    } catch {
      return read(this.#path);
    }
  }

  close(): void {
    if (typeof this.#fd === 'number') closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** The folder of this process's cgroup v2 (unified) hierarchy, or undefined on v1 / no cgroups. */
function cgroupV2Dir(): string | undefined {
  const line = read('/proc/self/cgroup')?.split('\n').find((l) => l.startsWith('0::'));
  if (line === undefined) return undefined;
  for (const dir of [`/sys/fs/cgroup${line.slice(3)}`, '/sys/fs/cgroup']) {
    if (read(`${dir}/cpu.max`) !== undefined || read(`${dir}/memory.max`) !== undefined) return dir;
  }
  return undefined;
}

const DESCRIPTIONS: readonly MetricDescription[] = [
  { name: 'uptime_uptime', description: 'Seconds since the metrics started', labels: [] },
  { name: 'cpu_ncpu', description: 'Number of logical CPUs (cgroup-aware)', labels: [] },
  { name: 'cpu_system', description: 'Percentage of CPU used by the system', labels: [] },
  { name: 'cpu_user', description: 'Percentage of CPU used by users', labels: [] },
  { name: 'cpu_idle', description: 'Percentage of idle CPU', labels: [] },
  { name: 'cpu_other', description: 'Percentage of CPU used for other things (nice, iowait, irq, steal)', labels: [] },
  { name: 'mem_total', description: 'Total available memory in bytes', labels: [] },
  { name: 'mem_free', description: 'Free memory in bytes', labels: [] },
  { name: 'net_rx', description: 'Number of received bytes', labels: ['interface'] },
  { name: 'net_tx', description: 'Number of transmitted bytes', labels: ['interface'] },
  { name: 'disk_total', description: 'Total size of the disk in bytes', labels: ['path'] },
  { name: 'disk_usage', description: 'Number of used bytes on the disk', labels: ['path'] },
];

/**
 * The machine: uptime of the metrics, CPU (percentages between two reads at least a second apart,
 * so a query between two ticks does not measure a few ticks of noise), memory (a cgroup limit
 * replaces the physical total), network counters and the disk under `storage.disk.dir`.
 */
export class SystemCollector implements MetricCollector {
  readonly #startedAt = Date.now();
  readonly #diskDir: string;
  readonly #cg = cgroupV2Dir();
  readonly #ncpu: number;
  #cpuAt = 0;
  #cpuLast: CpuTimes | undefined;
  #cpu = { system: 0, user: 0, idle: 100, other: 0 };
  readonly #stat = new KeptFile('/proc/stat');
  readonly #meminfo = new KeptFile('/proc/meminfo');
  readonly #netdev = new KeptFile('/proc/net/dev');
  readonly #memLimit: KeptFile;
  readonly #memUsed: KeptFile;
  #limitText: string | undefined;
  #limitAt = 0;
  /** Label objects made once (the history finds a series by its frozen labels object). */
  readonly #netLabels = new Map<string, Readonly<Record<string, string>>>();
  readonly #diskLabels: Readonly<Record<string, string>>;

  constructor(diskDir: string) {
    this.#diskDir = diskDir;
    this.#diskLabels = Object.freeze({ path: diskDir });
    const quota = this.#cg !== undefined
      ? parseCpuMax(read(`${this.#cg}/cpu.max`) ?? 'max')
      : parseCfsQuota(read('/sys/fs/cgroup/cpu/cpu.cfs_quota_us') ?? '-1', read('/sys/fs/cgroup/cpu/cpu.cfs_period_us') ?? '100000');
    this.#ncpu = Math.min(availableParallelism(), quota ?? Infinity);
    const v1 = '/sys/fs/cgroup/memory';
    this.#memLimit = new KeptFile(this.#cg !== undefined ? `${this.#cg}/memory.max` : `${v1}/memory.limit_in_bytes`);
    this.#memUsed = new KeptFile(this.#cg !== undefined ? `${this.#cg}/memory.current` : `${v1}/memory.usage_in_bytes`);
  }

  /** Closes the files it keeps open. */
  close(): void {
    for (const f of [this.#stat, this.#meminfo, this.#netdev, this.#memLimit, this.#memUsed]) f.close();
  }

  describe(): readonly MetricDescription[] {
    return DESCRIPTIONS;
  }

  collect(): readonly MetricValue[] {
    const out: MetricValue[] = [
      { name: 'uptime_uptime', labels: NO_LABELS, value: Math.floor((Date.now() - this.#startedAt) / 1000) },
      { name: 'cpu_ncpu', labels: NO_LABELS, value: this.#ncpu },
    ];
    const c = this.#cpuPercent();
    out.push(
      { name: 'cpu_system', labels: NO_LABELS, value: c.system }, { name: 'cpu_user', labels: NO_LABELS, value: c.user },
      { name: 'cpu_idle', labels: NO_LABELS, value: c.idle }, { name: 'cpu_other', labels: NO_LABELS, value: c.other },
    );
    const mem = this.#memory();
    if (mem) out.push({ name: 'mem_total', labels: NO_LABELS, value: mem.total }, { name: 'mem_free', labels: NO_LABELS, value: mem.free });
    for (const n of parseNetDev(this.#netdev.read() ?? '')) {
      let labels = this.#netLabels.get(n.name);
      if (!labels) {
        // interfaces come and go (a container host's veths): the names kept are bounded
        if (this.#netLabels.size >= MAX_NET_LABELS) this.#netLabels.clear();
        this.#netLabels.set(n.name, (labels = Object.freeze({ interface: n.name })));
      }
      out.push({ name: 'net_rx', labels, value: n.rx }, { name: 'net_tx', labels, value: n.tx });
    }
    try {
      const s = statfsSync(this.#diskDir);
      const labels = this.#diskLabels;
      out.push({ name: 'disk_total', labels, value: s.blocks * s.bsize }, { name: 'disk_usage', labels, value: (s.blocks - s.bfree) * s.bsize });
    } catch {
      // the folder is gone or not yet created: no disk figures this time
    }
    return out;
  }

  #cpuPercent(): { system: number; user: number; idle: number; other: number } {
    const now = Date.now();
    if (now - this.#cpuAt < 1000) return this.#cpu;
    const t = parseProcStat(this.#stat.read() ?? '');
    if (!t) return this.#cpu;
    const p = this.#cpuLast;
    // the first read has no predecessor: the averages since boot
    const d = p ? { user: t.user - p.user, system: t.system - p.system, idle: t.idle - p.idle, other: t.other - p.other, total: t.total - p.total } : t;
    if (d.total > 0) {
      const pct = (x: number) => (x / d.total) * 100;
      this.#cpu = { system: pct(d.system), user: pct(d.user), idle: pct(d.idle), other: pct(d.other) };
    }
    this.#cpuLast = t;
    this.#cpuAt = now;
    return this.#cpu;
  }

  #memory(): { total: number; free: number } | undefined {
    const m = parseMeminfo(this.#meminfo.read() ?? '');
    if (!m) return undefined;
    const now = Date.now();
    // a cgroup's limit changes rarely (an operator's `docker update`): read again every 30 s
    if (this.#limitText === undefined || now - this.#limitAt >= LIMIT_MAX_AGE_MS) {
      this.#limitText = this.#memLimit.read() ?? 'max';
      this.#limitAt = now;
    }
    const limit = parseMemoryLimit(this.#limitText, m.total);
    if (limit === undefined) return { total: m.total, free: m.available };
    const used = Number(this.#memUsed.read() ?? 0);
    return { total: limit, free: Math.max(0, Math.min(m.available, limit - (Number.isFinite(used) ? used : 0))) };
  }
}
