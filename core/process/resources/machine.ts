import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createServiceRef } from '../../../sdk/index.ts';
import { Cgroup } from './cgroup.ts';

/**
 * The machine's usage as the resource budget sees it: the process engine samples /proc itself
 * unless a plugin provides this (tests do, with `override`, to play a loaded machine).
 */
export interface MachineUsage {
  /**
   * The latest figures: CPU busy in percent of all cores (0-100) over the last interval, memory
   * in use and in total (bytes); undefined while unknown (then nothing is refused).
   */
  sample(): { cpuPercent: number; memoryBytes: number; memoryTotalBytes: number } | undefined;
}

/**
 * The machine usage the resource budget reads (optional: the engine samples /proc when nobody
 * provides it).
 *
 * @example
 * const kit = await createTestApp({ overrides: [override(machineUsageRef, { sample: () => busy })] });
 */
export const machineUsageRef = createServiceRef<MachineUsage>('machine-usage');

/*
 * The machine's CPU and memory as the resource budget reads them (`resources.*`), from procfs:
 * the first line of /proc/stat (jiffies of all cores) and /proc/meminfo (MemTotal, MemAvailable);
 * where the service's cgroup has a CPU quota or a memory limit (a container, a systemd unit), that
 * cgroup's instead (cgroup.ts): its CPU time over the quota's cores, its memory over its limit.
 */

/** Jiffies of all cores from /proc/stat's `cpu ` line: busy (all but idle and iowait) and total. */
export function parseProcStat(text: string): { busy: number; total: number } | undefined {
  const line = /^cpu\s+([\d\s]+)$/m.exec(text);
  if (!line) return undefined;
  // user nice system idle iowait irq softirq steal (guest and guest_nice are inside user and nice)
  const f = line[1]!.trim().split(/\s+/).map(Number).slice(0, 8);
  if (f.length < 4 || f.some((n) => !Number.isFinite(n))) return undefined;
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3]! + (f[4] ?? 0);
  return { busy: total - idle, total };
}

/** Bytes in use (MemTotal - MemAvailable) and in total from /proc/meminfo. */
export function parseMeminfo(text: string): { used: number; total: number } | undefined {
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kb('MemTotal');
  // kernels before 3.14 have no MemAvailable: free + buffers + cached is its old estimate
  const available = kb('MemAvailable') ?? ((kb('MemFree') ?? 0) + (kb('Buffers') ?? 0) + (kb('Cached') ?? 0));
  if (!total) return undefined;
  return { used: Math.max(0, total - available), total };
}

/** Reads procfs when asked, at most twice a second; CPU is the busy share since the previous read. */
export class ProcMachineUsage implements MachineUsage {
  readonly #procRoot: string;
  readonly #cgroup: Cgroup;
  readonly #now: () => number;
  #last: { busy: number; total: number } | undefined;
  /** The cgroup's CPU seconds at the previous read, and when (ms). */
  #lastCg: { seconds: number; at: number } | undefined;
  #lastAt = -Infinity;
  #value: ReturnType<MachineUsage['sample']>;

  /** `procRoot` and `sysRoot` (/sys/fs/cgroup) are folders of recorded files in tests; `now` their clock (ms). */
  constructor(procRoot = '/proc', o: { sysRoot?: string; now?: () => number } = {}) {
    this.#procRoot = procRoot;
    this.#cgroup = new Cgroup(procRoot, o.sysRoot);
    this.#now = o.now ?? (() => performance.now());
  }

  sample(): ReturnType<MachineUsage['sample']> {
    const now = this.#now();
    if (now - this.#lastAt < 500) return this.#value;
    this.#lastAt = now;
    try {
      const cpu = parseProcStat(readFileSync(`${this.#procRoot}/stat`, 'latin1'));
      const mem = parseMeminfo(readFileSync(`${this.#procRoot}/meminfo`, 'latin1'));
      if (!cpu || !mem) return (this.#value = undefined);
      // the first read has nothing to compare with: the average since boot
      const prev = this.#last ?? { busy: 0, total: 0 };
      this.#last = cpu;
      const span = cpu.total - prev.total;
      let cpuPercent = span > 0 ? ((cpu.busy - prev.busy) / span) * 100 : (this.#value?.cpuPercent ?? 0);
      let memory = { used: mem.used, total: mem.total };
      const cg = this.#cgroup.read();
      if (cg.cpuCores !== undefined && cg.cpuSeconds !== undefined) cpuPercent = this.#cgroupCpu(cg.cpuCores, cg.cpuSeconds, now, cpuPercent);
      else this.#lastCg = undefined;
      if (cg.memoryLimit !== undefined && cg.memoryUsed !== undefined) memory = { used: cg.memoryUsed, total: Math.min(cg.memoryLimit, mem.total) };
      this.#value = { cpuPercent, memoryBytes: memory.used, memoryTotalBytes: memory.total };
    } catch {
      this.#value = undefined;
    }
    return this.#value;
  }

  /** The cgroup's CPU time since the previous read over what its quota allowed in that time (0-100); the host's figure at the first read. */
  #cgroupCpu(cores: number, seconds: number, now: number, host: number): number {
    const prev = this.#lastCg;
    this.#lastCg = { seconds, at: now };
    if (!prev || now <= prev.at) return Math.min(100, host);
    return Math.min(100, Math.max(0, ((seconds - prev.seconds) / (((now - prev.at) / 1000) * cores)) * 100));
  }
}
