import { Cron } from 'croner';
import type { ProcessClock } from '../../sdk/index.ts';

/*
 * A process's `scheduler` (the reference successor's field): a 5-field cron expression,
 * evaluated in UTC, or an RFC 3339 instant for a single start. Cron expressions are parsed and
 * stepped by `croner`; this file only tells the two forms apart and asks it for times.
 */

/** Date.now and node's timers. */
export const realClock: ProcessClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** RFC 3339 date-time: a date, `T` (or a space), a time, and a zone (`Z` or an offset). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

export type Schedule = { kind: 'cron'; cron: Cron } | { kind: 'once'; at: number };

/** The instant of an RFC 3339 time whose every field is in range (Date.parse rolls 02-30 over to March), or NaN. */
function rfc3339Instant(v: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/.exec(v)!;
  const [y, mo, d, h, mi, sec, oh, om] = m.slice(1).map((x) => Number(x ?? 0)) as number[];
  const day = new Date(Date.UTC(2000, 0, 1));
  day.setUTCFullYear(y!, mo! - 1, d!);
  const calendar = day.getUTCFullYear() === y && day.getUTCMonth() === mo! - 1 && day.getUTCDate() === d;
  if (!calendar || h! > 23 || mi! > 59 || sec! > 59 || oh! > 23 || om! > 59) return NaN;
  return Date.parse(v.replace(' ', 'T'));
}

/** The schedule of a `scheduler` value, or why it is not one (a cron expression that never fires is not one). */
export function parseSchedule(value: string): Schedule | string {
  const v = value.trim();
  if (RFC3339.test(v)) {
    const at = rfc3339Instant(v);
    return Number.isFinite(at) ? { kind: 'once', at } : `'${value}' is not a valid RFC 3339 time`;
  }
  if (v.split(/\s+/).length !== 5) return `'${value}' is neither a 5-field cron expression nor an RFC 3339 time`;
  let cron: Cron;
  try {
    // no function: croner only computes times, it starts no timer of its own
    cron = new Cron(v, { mode: '5-part', utcOffset: 0, paused: true });
  } catch (err) {
    return `'${value}' is not a valid cron expression: ${(err as Error).message}`;
  }
  // a date that never comes (`0 0 31 2 *`): croner answers no next run, or fails on it
  if (cronNext(cron, Date.now()) === undefined) return `'${value}' never fires (no such date)`;
  return { kind: 'cron', cron };
}

/** The reason the config's scheduler fields are unusable, naming the field, or undefined. */
export function scheduleProblem(c: { scheduler: string }): string | undefined {
  if (c.scheduler === '') return undefined;
  const s = parseSchedule(c.scheduler);
  return typeof s === 'string' ? `scheduler: ${s}` : undefined;
}

/** croner's next run strictly after `t` (ms); undefined when there is none or croner fails on the expression. */
function cronNext(cron: Cron, t: number): number | undefined {
  try {
    return cron.nextRun(new Date(t))?.getTime();
  } catch {
    // croner recurses on some impossible dates (`0 0 31 4,6,9,11 *`) until the stack is full
    return undefined;
  }
}

/** The first start strictly after `t` (ms), or undefined when there is none. */
export function nextStart(s: Schedule, t: number): number | undefined {
  if (s.kind === 'once') return s.at > t ? s.at : undefined;
  return cronNext(s.cron, t);
}

/**
 * The latest start at or before `t` (ms) and not before `floor` (ms; earlier starts do not
 * matter to the caller), or undefined. Found with forward steps only (croner's backward search
 * fails on rare dates such as `0 0 29 2 *`): the latest whole second `x` in [floor - 1 s, t)
 * whose next run is still at or before `t`, by bisection (about 40 steps for any span).
 */
export function lastStart(s: Schedule, t: number, floor: number): number | undefined {
  if (s.kind === 'once') return s.at <= t && s.at >= floor ? s.at : undefined;
  const within = (x: number) => { const n = cronNext(s.cron, x); return n !== undefined && n <= t; };
  let lo = Math.floor(floor / 1000) * 1000 - 1000;
  if (lo >= t || !within(lo)) return undefined;
  let hi = Math.floor(t / 1000) * 1000;
  // invariant: within(lo), and every x >= hi is not (a next run is strictly after x, on whole seconds)
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (within(mid)) lo = mid; else hi = mid;
  }
  const last = cronNext(s.cron, lo);
  return last !== undefined && last >= floor ? last : undefined;
}

/** An RFC 3339 time in UTC, whole seconds (as the API shows times). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
