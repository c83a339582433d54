import t from 'tap';
import { readFileSync } from 'node:fs';
import { Value } from '@sinclair/typebox/value';
import { ProcessLog, ReportHistory, buildReport, toReportLog } from '../../../../core/process/parse/log.ts';
import { ProgressParser, splitLines } from '../../../../core/process/parse/progress.ts';
import { ProcessReportSchema, type ReportHistoryEntry } from '../../../../core/process/parse/schemas.ts';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i}`);

t.test('prelude keeps the first 100 and the last 50 lines (reference 16)', async (t) => {
  const cases: [number, number, string | undefined][] = [
    [10, 10, undefined],
    [150, 150, undefined],
    [151, 151, '... truncated 1 lines ...'],
    [300, 151, '... truncated 150 lines ...'],
  ];
  for (const [n, kept, marker] of cases) {
    const log = new ProcessLog();
    for (const l of lines(n)) log.add(l, true);
    const prelude = log.prelude();
    t.equal(prelude.length, kept, `${n} lines keep ${kept}`);
    t.equal(prelude[0], 'line 0');
    t.equal(prelude.at(-1), `line ${n - 1}`);
    if (marker) {
      t.equal(prelude[100], marker);
      t.equal(prelude[99], 'line 99');
      t.equal(prelude[101], `line ${n - 50}`);
    } else {
      t.notOk(prelude.some((l) => l.startsWith('... truncated')));
    }
  }
});

t.test('only lines before progress are prelude; other head/tail sizes', async (t) => {
  const log = new ProcessLog({ preludeHead: 2, preludeTail: 1 });
  for (const l of lines(5)) log.add(l, true);
  log.add('after progress started', false);
  t.same(log.prelude(), ['line 0', 'line 1', '... truncated 2 lines ...', 'line 4']);
  t.equal(log.lastLine, 'after progress started');
  const noTail = new ProcessLog({ preludeHead: 1, preludeTail: 0 });
  for (const l of lines(3)) noTail.add(l, true);
  t.same(noTail.prelude(), ['line 0', '... truncated 2 lines ...']);
});

t.test('the log ring keeps the newest max_lines lines with their time', async (t) => {
  let now = 1_700_000_000_123;
  const log = new ProcessLog({ maxLines: 5, now: () => now });
  for (const l of lines(12)) {
    now += 1000;
    log.add(l, false);
  }
  const entries = log.entries();
  t.same(entries.map((e) => e.data), ['line 7', 'line 8', 'line 9', 'line 10', 'line 11']);
  t.equal(entries[0]!.timestamp, 1_700_000_000_123 + 8000);
  t.same(toReportLog(entries)[4], ['1700000012', 'line 11'], 'unix seconds as a string');
  t.equal(log.lastLine, 'line 11');
  t.equal(new ProcessLog().lastLine, '');
});

t.test('history: bounded, oldest first, runs without prelude are not kept', async (t) => {
  const entry = (n: number, prelude = [`p${n}`]): ReportHistoryEntry => ({ created_at: n, prelude, log: [] });
  const history = new ReportHistory(3);
  for (let i = 1; i <= 5; i++) t.equal(history.push(entry(i)), true);
  t.equal(history.push(entry(6, [])), false);
  t.same(history.entries().map((e) => e.created_at), [3, 4, 5]);
  const carried = new ReportHistory(2, history.entries());
  t.same(carried.entries().map((e) => e.created_at), [4, 5], 'carried over into a smaller history');
  t.same(new ReportHistory(0, history.entries()).entries(), []);
  history.clear();
  t.same(history.entries(), []);
});

t.test('rotate: a run becomes a history entry with how it ended', async (t) => {
  let now = 10_000;
  const log = new ProcessLog({ now: () => now });
  const history = new ReportHistory(3);
  log.add('ffmpeg version x', true);
  log.add('Conversion failed!', true);
  log.finish('failed');
  now = 20_000;
  t.equal(history.push(log.rotate()), true);
  const [first] = history.entries();
  t.match(first, { created_at: 10, prelude: ['ffmpeg version x', 'Conversion failed!'], exit_state: 'failed' });
  t.same(first!.log, [['10', 'ffmpeg version x'], ['10', 'Conversion failed!']]);
  t.equal(log.createdAt, 20_000);
  t.same(log.prelude(), []);
  t.same(log.entries(), []);
  t.equal(history.push(log.rotate()), false, 'an empty run is not history');
  const report = buildReport(log, history);
  t.match(report, { created_at: 20, prelude: [], log: [], history: [{ created_at: 10 }] });
  t.ok(Value.Check(ProcessReportSchema, report));
});

t.test('with the progress parser on a recording: no stats in the log, prelude up to the first stats line', async (t) => {
  let now = 0;
  const log = new ProcessLog({ now: () => now });
  const parser = new ProgressParser({ now: () => now, log });
  for (const line of splitLines(readFileSync(new URL('../../../fixtures/ffmpeg/hls-av.stderr', import.meta.url), 'utf8'))) {
    now += 10;
    parser.feed(line);
  }
  const prelude = log.prelude();
  t.equal(prelude.length, 36);
  t.match(prelude[0], /^ffmpeg version 5\.1/);
  t.equal(prelude.at(-1), '      encoder         : Lavc59.37.100 aac');
  const entries = log.entries();
  t.equal(entries.length, 50, 'max_lines default');
  t.notOk(entries.some((e) => /^L?(frame|size)=/.test(e.data)));
  t.match(log.lastLine, /^\[aac @ 0x[0-9a-f]+\] Qavg: /);
  log.finish('finished', parser.snapshot());
  const entry = log.rotate();
  t.equal(entry.progress?.frame, 75);
  t.equal(entry.exit_state, 'finished');
});
