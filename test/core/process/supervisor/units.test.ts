import t from 'tap';
import { canTransition, exitState, LimitWatch, LineSplitter } from '../../../../core/process/supervisor/index.ts';

function split(chunks: string[], maxLine?: number): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l), maxLine);
  for (const c of chunks) s.push(c);
  s.end();
  return out;
}

t.test('line splitter: \\r, \\n, \\r\\n, empty lines, partial chunks', async (t) => {
  t.same(split(['a\nb\rc\r\nd']), ['a', 'b', 'c', 'd']);
  t.same(split(['\n\n\r\r']), []);
  t.same(split(['fra', 'me=  1 fps', '=0.0\rframe=  2', '\r', 'x']), ['frame=  1 fps=0.0', 'frame=  2', 'x']);
  t.same(split(['abc\r', '\ndef\n']), ['abc', 'def'], '\\r\\n split across chunks gives no empty line');
  t.same(split(['a', 'b', 'c']), ['abc'], 'a final line without a break is flushed at the end');
  t.same(split(['xxxxxxxxxx', 'yy\n'], 8), ['xxxxxxxxxx', 'yy'], 'an endless line is cut at maxLine');
});

t.test('exit mapping (reference 7.1)', async (t) => {
  t.equal(exitState(0, null), 'finished');
  t.equal(exitState(255, null), 'finished', 'ffmpeg after SIGINT');
  t.equal(exitState(3, null), 'failed');
  t.equal(exitState(1, null), 'failed');
  t.equal(exitState(null, 'SIGKILL'), 'killed');
  t.equal(exitState(null, 'SIGINT'), 'killed');
});

t.test('allowed transitions (reference 7.1)', async (t) => {
  t.ok(canTransition('finished', 'starting'));
  t.ok(canTransition('starting', 'running'));
  t.ok(canTransition('starting', 'failed'));
  t.ok(canTransition('running', 'killed'));
  t.ok(canTransition('finishing', 'finished'));
  t.ok(canTransition('killed', 'starting'));
  t.notOk(canTransition('finished', 'running'));
  t.notOk(canTransition('failed', 'finished'));
  t.notOk(canTransition('finishing', 'running'));
  t.notOk(canTransition('killed', 'running'));
});

t.test('limit watch: immediate without waitfor, only after waitfor otherwise', async (t) => {
  const w = new LimitWatch();
  t.match(w.check({ cpuUsage: 50, memoryBytes: 0, waitforSeconds: 0 }, 80, 1e9, 0), /^cpu limit/);
  t.equal(w.check({ cpuUsage: 0, memoryBytes: 0, waitforSeconds: 0 }, 900, 1e12, 0), undefined, '0 disables');

  const limits = { cpuUsage: 0, memoryBytes: 1000, waitforSeconds: 2 };
  const m = new LimitWatch();
  t.equal(m.check(limits, 1, 2000, 0), undefined);
  t.equal(m.check(limits, 1, 2000, 1000), undefined);
  t.equal(m.check(limits, 1, 500, 1500), undefined, 'a dip below resets the count');
  t.equal(m.check(limits, 1, 2000, 2000), undefined);
  t.equal(m.check(limits, 1, 2000, 3000), undefined);
  t.match(m.check(limits, 1, 2000, 4000), /^memory limit exceeded/);
  t.equal(m.check(limits, -1, -1, 5000), undefined, 'unknown samples never count as over');
});
