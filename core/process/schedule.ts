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

/** The schedule of a `scheduler` value, or why it is not one. */
export function parseSchedule(value: string): Schedule | string {
  const v = value.trim();
  if (RFC3339.test(v)) {
    const at = Date.parse(v.replace(' ', 'T'));
    return Number.isFinite(at) ? { kind: 'once', at } : `'${value}' is not a valid RFC 3339 time`;
  }
  if (v.split(/\s+/).length !== 5) return `'${value}' is neither a 5-field cron expression nor an RFC 3339 time`;
  try {
    // no function: croner only computes times, it starts no timer of its own
    return { kind: 'cron', cron: new Cron(v, { mode: '5-part', timezone: 'Etc/UTC', paused: true }) };
  } catch (err) {
    return `'${value}' is not a valid cron expression: ${(err as Error).message}`;
  }
}

/** The reason the config's scheduler fields are unusable, naming the field, or undefined. */
export function scheduleProblem(c: { scheduler: string }): string | undefined {
  if (c.scheduler === '') return undefined;
  const s = parseSchedule(c.scheduler);
  return typeof s === 'string' ? `scheduler: ${s}` : undefined;
}

/** The first start strictly after `t` (ms), or undefined when there is none. */
export function nextStart(s: Schedule, t: number): number | undefined {
  if (s.kind === 'once') return s.at > t ? s.at : undefined;
  return s.cron.nextRun(new Date(t))?.getTime();
}

/** The latest start at or before `t` (ms), or undefined. */
export function lastStart(s: Schedule, t: number): number | undefined {
  if (s.kind === 'once') return s.at <= t ? s.at : undefined;
  // croner's previous runs are strictly before the reference, in whole seconds: step to the next second
  return s.cron.previousRuns(1, new Date(Math.floor(t / 1000) * 1000 + 1000))[0]?.getTime();
}

/** An RFC 3339 time in UTC, whole seconds (as the API shows times). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
