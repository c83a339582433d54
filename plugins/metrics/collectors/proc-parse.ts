/*
 * Pure parsers of the Linux files the system collector reads (/proc and cgroup v1/v2), so they
 * are tested on recorded text. Every parser answers undefined (or skips) what it cannot read:
 * a missing figure is left out, never guessed.
 */

/** Aggregate CPU times of `/proc/stat`'s first line, in clock ticks. */
export interface CpuTimes {
  user: number;
  system: number;
  idle: number;
  /** nice, iowait, irq, softirq, steal */
  other: number;
  total: number;
}

export function parseProcStat(text: string): CpuTimes | undefined {
  const end = text.indexOf('\n');
  const line = end < 0 ? text : text.slice(0, end);
  if (!line.startsWith('cpu ')) return undefined;
  const f = line.slice(4).trim().split(/\s+/).map(Number);
  if (f.length < 4 || f.some((n) => !Number.isFinite(n))) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  // guest and guest_nice are already part of user and nice
  const other = nice + iowait + irq + softirq + steal;
  return { user, system, idle, other, total: user + system + idle + other };
}

/** `MemTotal` and `MemAvailable` of `/proc/meminfo`, in bytes. */
export function parseMeminfo(text: string): { total: number; available: number } | undefined {
  const kb = (key: string): number | undefined => {
    const m = new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kb('MemTotal');
  if (total === undefined) return undefined;
  return { total, available: kb('MemAvailable') ?? kb('MemFree') ?? 0 };
}

/** Received and sent bytes per interface of `/proc/net/dev`. */
export function parseNetDev(text: string): { name: string; rx: number; tx: number }[] {
  const out: { name: string; rx: number; tx: number }[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const f = line.slice(colon + 1).trim().split(/\s+/).map(Number);
    if (!name || f.length < 9 || !Number.isFinite(f[0]) || !Number.isFinite(f[8])) continue;
    out.push({ name, rx: f[0]!, tx: f[8]! });
  }
  return out;
}

/** CPUs granted by a cgroup v2 `cpu.max` (`quota period`); undefined when unlimited. */
export function parseCpuMax(text: string): number | undefined {
  const [quota, period] = text.trim().split(/\s+/);
  if (quota === undefined || quota === 'max') return undefined;
  return cpusOf(Number(quota), Number(period ?? 100000));
}

/** CPUs granted by cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`; undefined when unlimited (-1). */
export function parseCfsQuota(quotaText: string, periodText: string): number | undefined {
  return cpusOf(Number(quotaText.trim()), Number(periodText.trim()));
}

function cpusOf(quota: number, period: number): number | undefined {
  if (!Number.isFinite(quota) || !Number.isFinite(period) || quota <= 0 || period <= 0) return undefined;
  return quota / period;
}

/**
 * A cgroup memory limit (v2 `memory.max`, v1 `memory.limit_in_bytes`); undefined when unlimited
 * (`max`, or v1's huge "no limit" number that exceeds any real memory).
 */
export function parseMemoryLimit(text: string, physical: number): number | undefined {
  const t = text.trim();
  if (t === 'max' || t === '') return undefined;
  const n = Number(t);
  if (!Number.isFinite(n) || n <= 0 || n >= physical) return undefined;
  return n;
}
