import { ApiError, linearRegex, type LinearRegex } from '../../sdk/index.ts';
import type { MetricsQueryInput, MetricValue } from './api.ts';
import type { MetricsHistory } from './history.ts';
import type { MetricsResponse } from './schema.ts';

type Labels = Readonly<Record<string, string>>;
type ResponseMetric = MetricsResponse['metrics'][number];

/**
 * The work a query's label patterns may do, in automaton states visited (about a second of the main
 * thread): past it the query is refused. Patterns run in linear time, but a query may hold many
 * patterns, each tested on every series.
 */
export const MAX_QUERY_STEPS = 20_000_000;
/** The program steps of all of a query's patterns together (each pattern at most `MAX_REGEX_PROGRAM`). */
export const MAX_QUERY_PROGRAM = 200_000;
const tooCostly = (detail: string) => new ApiError(400, 'The label patterns take too much work for one query', [`${detail}: fewer or simpler patterns`], 'METRICS_QUERY_TOO_COSTLY');

/** Label values remembered per pattern (series share values: a process id, a state). */
const MEMO_ENTRIES = 4096;

/** One label's pattern: linear-time (RE2's syntax, as the reference), its answers by value remembered. */
class LabelPattern {
  readonly #re: LinearRegex;
  readonly #memo = new Map<string, boolean>();
  readonly #budget: { left: number };

  constructor(re: LinearRegex, budget: { left: number }) {
    this.#re = re;
    this.#budget = budget;
  }

  test(value: string): boolean {
    let ok = this.#memo.get(value);
    if (ok !== undefined) return ok;
    const before = this.#re.steps;
    ok = this.#re.test(value);
    if ((this.#budget.left -= this.#re.steps - before) < 0) {
      throw tooCostly(`more than ${MAX_QUERY_STEPS} automaton steps`);
    }
    if (this.#memo.size < MEMO_ENTRIES) this.#memo.set(value, ok);
    return ok;
  }
}

/** One query metric: a name and label patterns; a bad pattern matches nothing (reference 12.3). */
interface Pattern {
  name: string;
  labels: [string, LabelPattern | null][];
}

/** The query's patterns; 400 when together they compile to more than `MAX_QUERY_PROGRAM` steps. */
export function compilePatterns(q: MetricsQueryInput): Pattern[] {
  const budget = { left: MAX_QUERY_STEPS };
  let size = 0;
  return (q.metrics ?? []).map((m) => ({
    name: m.name,
    labels: Object.entries(m.labels ?? {}).map(([k, src]): [string, LabelPattern | null] => {
      const re = linearRegex(src);
      if (re && (size += re.size) > MAX_QUERY_PROGRAM) throw tooCostly(`the patterns compile to more than ${MAX_QUERY_PROGRAM} steps`);
      return [k, re ? new LabelPattern(re, budget) : null];
    }),
  }));
}


/** Unanchored patterns on every given label; a label the value lacks does not match. */
export function matches(patterns: readonly Pattern[], name: string, labels: Labels): boolean {
  return patterns.some((p) => p.name === name && p.labels.every(([k, re]) => re !== null && k in labels && re.test(labels[k]!)));
}

const finite = (v: number) => (Number.isFinite(v) ? v : 0);
const responseLabels = (l: Labels): Labels | null => (Object.keys(l).length ? l : null);

/** `timerange_sec == 0`: the values collected on the spot, one point each. */
export function currentValues(patterns: readonly Pattern[], values: readonly MetricValue[], now: number): ResponseMetric[] {
  const ts = Math.floor(now / 1000);
  const out: ResponseMetric[] = [];
  for (const v of values) {
    if (matches(patterns, v.name, v.labels)) out.push({ name: v.name, labels: responseLabels(v.labels), values: [[ts, finite(v.value)]] });
  }
  return out;
}

export interface HistoryRequest {
  /** Query range and step, seconds. */
  timerange: number;
  interval: number;
  /** The configured sampling interval, seconds. */
  configuredInterval: number;
  now: number;
}

/**
 * History resampled as reference 12.3 says: samples older than now - range - interval(configured)
 * are dropped; `range / interval` points from there with step `interval`; a point before the
 * first sample is left out, one after the last repeats the last, any other takes the latest
 * sample at or before it. A series shows the points whose sample carried a value.
 */
export function historyValues(patterns: readonly Pattern[], h: MetricsHistory, r: HistoryRequest): ResponseMetric[] {
  if (r.timerange <= 0 || r.interval <= 0) return [];
  const from = r.now - (r.timerange + r.configuredInterval) * 1000;
  const slots = h.slotsSince(from);
  if (slots.length === 0) return [];
  const points: { ts: number; slot: number }[] = [];
  const steps = Math.floor(r.timerange / r.interval);
  // the points before the first sample are left out: start at the first step on or after it (a
  // timerange of 10^12 s walked 10^12 steps on the main thread before)
  const first = Math.max(0, Math.ceil((h.time(slots[0]!) - from) / (r.interval * 1000)));
  let j = 0;
  for (let i = first; i < steps; i++) {
    const t = from + i * r.interval * 1000;
    if (t < h.time(slots[0]!)) continue;
    while (j + 1 < slots.length && h.time(slots[j + 1]!) <= t) j++;
    points.push({ ts: Math.floor(t / 1000), slot: slots[j]! });
  }
  const out: ResponseMetric[] = [];
  for (const s of h.series()) {
    if (!matches(patterns, s.name, s.labels)) continue;
    const values: [number, number][] = [];
    for (const p of points) {
      const v = s.values[p.slot]!;
      if (!Number.isNaN(v)) values.push([p.ts, finite(v)]);
    }
    if (values.length) out.push({ name: s.name, labels: responseLabels(s.labels), values });
  }
  return out;
}
