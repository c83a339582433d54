import t from 'tap';
import { MetricsHistory } from '../../../plugins/metrics/history.ts';
import { compilePatterns, historyValues } from '../../../plugins/metrics/query.ts';

const v = (value: number, labels: Record<string, string> = {}) => ({ name: 'm', labels, value });
const all = compilePatterns({ metrics: [{ name: 'm' }] });

t.test('resampling (reference 12.3): drop before the first sample, latest at or before, repeat the last', async (t) => {
  const h = new MetricsHistory(100);
  // samples at 100 s, 102 s, 104 s (configured interval 2 s) with values 1, 2, 3
  for (const [i, s] of [100, 102, 104].entries()) h.record(s * 1000, [v(i + 1)]);
  // now = 107 s, range 6 s: from = 107 - 6 - 2 = 99 s; 6 points at 99..104
  const r = historyValues(all, h, { timerange: 6, interval: 1, configuredInterval: 2, now: 107_000 });
  t.same(r, [{ name: 'm', labels: null, values: [[100, 1], [101, 1], [102, 2], [103, 2], [104, 3]] }], '99 is before the first sample');
  const later = historyValues(all, h, { timerange: 6, interval: 1, configuredInterval: 2, now: 110_000 });
  t.same(later[0]!.values, [[102, 2], [103, 2], [104, 3], [105, 3], [106, 3], [107, 3]], 'samples older than from are dropped; after the last repeats it');
  t.same(historyValues(all, h, { timerange: 6, interval: 0, configuredInterval: 2, now: 107_000 }), [], 'interval 0');
  t.same(historyValues(all, h, { timerange: 6, interval: 1, configuredInterval: 2, now: 200_000 }), [], 'everything too old');
  // a client's timerange of 10^12 s: only the steps the history covers are walked (it held the main thread for hours)
  const huge = historyValues(all, h, { timerange: 1e12, interval: 1, configuredInterval: 2, now: 107_000 });
  t.same(huge, [{ name: 'm', labels: null, values: [[100, 1], [101, 1], [102, 2], [103, 2], [104, 3]] }], 'the same points as the range the history has');
});

t.test('a series shows only the points whose sample carried it; rings wrap and forget absent series', async (t) => {
  const h = new MetricsHistory(3);
  h.record(1000, [v(1, { a: 'x' })]);
  h.record(2000, [v(2, { a: 'x' }), v(5, { a: 'y' })]);
  h.record(3000, [v(6, { a: 'y' })]);
  const r = historyValues(all, h, { timerange: 3, interval: 1, configuredInterval: 1, now: 4000 });
  t.same(r.map((s) => [s.labels, s.values]), [[{ a: 'x' }, [[1, 1], [2, 2]]], [{ a: 'y' }, [[2, 5]]]], 'points at 0 (dropped), 1, 2: from = now - range - interval');
  h.record(4000, [v(7, { a: 'y' })]);
  h.record(5000, [v(8, { a: 'y' })]);
  h.record(6000, [v(9, { a: 'y' })]);
  t.same([...h.series()].map((s) => s.labels), [{ a: 'y' }], 'x was absent for a whole range: dropped');
  const w = historyValues(all, h, { timerange: 4, interval: 1, configuredInterval: 1, now: 7000 });
  t.same(w[0]!.values, [[4, 7], [5, 8]], 'points at 2 and 3 s come before the oldest kept sample (4 s)');
});

t.test('frozen label objects find their series by identity, also after the series was dropped and came back', async (t) => {
  const h = new MetricsHistory(2);
  const x = Object.freeze({ a: 'x' });
  const two = (value: number) => [{ name: 'm', labels: x, value }, { name: 'n', labels: x, value: value * 10 }];
  h.record(1000, two(1));
  h.record(2000, [...two(2), v(3, { a: 'x' })]);
  t.equal([...h.series()].length, 2, 'a fresh object with the same labels is the same series');
  h.record(3000, []);
  h.record(4000, []);
  t.equal([...h.series()].length, 0, 'absent for a whole range: dropped');
  h.record(5000, two(5));
  h.record(6000, two(6));
  const r = historyValues(all, h, { timerange: 3, interval: 1, configuredInterval: 1, now: 8000 });
  t.same(r, [{ name: 'm', labels: { a: 'x' }, values: [[5, 5], [6, 6]] }], 'back as a new series, with its values');
  t.equal([...h.series()].length, 2, 'kept again');
});

t.test('a sample laid out as the last one is written straight; a series absent from it still gets no value', async (t) => {
  // a ring of 4: a slot b skipped would still hold its value of 4 samples before
  const h = new MetricsHistory(4);
  const a = Object.freeze({ a: 'a' });
  const b = Object.freeze({ a: 'b' });
  const m = (labels: object, value: number) => ({ name: 'm', labels: labels as Record<string, string>, value });
  const samples = [[a, b], [a, b], [a, b], [a, b], [a, a], [a, a], [a, b]];
  samples.forEach((layout, i) => h.record((i + 1) * 1000, layout.map((l) => m(l, i + 1))));
  const r = historyValues(all, h, { timerange: 3, interval: 1, configuredInterval: 1, now: 9000 });
  t.same(r.map((s) => [s.labels, s.values.map(([ts, v]) => `${ts}:${v}`)]), [
    [{ a: 'a' }, ['5:5', '6:6', '7:7']],
    [{ a: 'b' }, ['7:7']],
  ], 'b has no value where the samples named a twice instead (the second such sample laid out as the first)');
});

t.test('a ring of one: every sample, laid out as the last or not, keeps its values', async (t) => {
  const h = new MetricsHistory(1);
  const a = Object.freeze({ a: 'a' });
  for (let i = 1; i <= 3; i++) h.record(i * 1000, [{ name: 'm', labels: a, value: i }]);
  h.record(4000, [{ name: 'm', labels: { a: 'a' }, value: 4 }]);
  h.record(5000, [{ name: 'm', labels: a, value: 5 }]);
  t.same([...h.series()].map((s) => s.values[0]), [5], 'one series, the newest value');
  t.same(historyValues(all, h, { timerange: 1, interval: 1, configuredInterval: 1, now: 7000 }), [{ name: 'm', labels: { a: 'a' }, values: [[5, 5]] }]);
});
