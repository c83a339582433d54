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
  if (!text.startsWith('cpu ')) return undefined;
  let end = text.indexOf('\n');
  if (end < 0) end = text.length;
  // user nice system idle iowait irq softirq steal (guest, guest_nice: read, must be numbers)
  const f = [0, 0, 0, 0, 0, 0, 0, 0];
  const count = scanFields(text, 4, end, f, true);
  if (count < 4) return undefined;
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = f;
  // guest and guest_nice are already part of user and nice
  const other = nice + iowait + irq + softirq + steal;
  return { user, system, idle, other, total: user + system + idle + other };
}

/**
 * The whitespace-separated fields of `text` from `from` to `end` as numbers: the first
 * `into.length` written into `into` (NaN for one that is not a number); answers how many fields
 * there are, or -1 with `strict` when any field is not a finite number. A scan, no split or
 * regular expression: the system collector runs it every sample (issue 46.2).
 */
function scanFields(text: string, from: number, end: number, into: number[], strict: boolean): number {
  let count = 0;
  for (let i = from; ;) {
    while (i < end && (text.charCodeAt(i) === 0x20 || text.charCodeAt(i) === 0x09)) i++;
    if (i >= end) return count;
    const start = i;
    let n = 0;
    let digits = true;
    for (; i < end && text.charCodeAt(i) !== 0x20 && text.charCodeAt(i) !== 0x09; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x30 && c <= 0x39) n = n * 10 + (c - 0x30);
      else digits = false;
    }
    if (!digits) n = Number(text.slice(start, i));
    if (strict && !Number.isFinite(n)) return -1;
    if (count < into.length) into[count] = n;
    count++;
  }
}

/**
 * The number after `key:` at the start of a line of `text` (spaces or tabs between), or undefined.
 * A scan, no regular expression or split: the collector runs it every sample (issue 46.2).
 */
function numberAfterKey(text: string, key: string): number | undefined {
  const head = `${key}:`;
  let at: number;
  if (text.startsWith(head)) at = 0;
  else {
    const nl = text.indexOf(`\n${head}`);
    if (nl < 0) return undefined;
    at = nl + 1;
  }
  at += head.length;
  const blanks = at;
  while (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 0x09) at++;
  if (at === blanks) return undefined;
  const digits = at;
  let n = 0;
  for (let c = text.charCodeAt(at); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++at)) n = n * 10 + (c - 0x30);
  return at > digits ? n : undefined;
}

/** `MemTotal` and `MemAvailable` of `/proc/meminfo`, in bytes. */
export function parseMeminfo(text: string): { total: number; available: number } | undefined {
  const kb = (key: string): number | undefined => {
    const n = numberAfterKey(text, key);
    return n === undefined ? undefined : n * 1024;
  };
  const total = kb('MemTotal');
  if (total === undefined) return undefined;
  return { total, available: kb('MemAvailable') ?? kb('MemFree') ?? 0 };
}

/** Received and sent bytes per interface of `/proc/net/dev`. */
export function parseNetDev(text: string): { name: string; rx: number; tx: number }[] {
  const out: { name: string; rx: number; tx: number }[] = [];
  const fields = new Array<number>(9).fill(NaN);
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const colon = text.indexOf(':', start);
    if (colon >= 0 && colon < end) {
      const name = text.slice(start, colon).trim();
      // received bytes first, sent bytes ninth
      const count = scanFields(text, colon + 1, end, fields, false);
      const rx = fields[0]!;
      const tx = fields[8]!;
      if (name && count >= 9 && Number.isFinite(rx) && Number.isFinite(tx)) out.push({ name, rx, tx });
    }
    start = end + 1;
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
