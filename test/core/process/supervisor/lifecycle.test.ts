import t from 'tap';
import { waitFor } from '../../../helpers/wait.ts';
import { alive, args, FFMPEG, FFMPEG_RUNNING, gap, supervise } from './helpers.ts';

t.test('ffmpeg: finished -> starting -> running, stop -> finishing -> finished (exit 255)', async (t) => {
  const rec = supervise(t, { binary: FFMPEG, prepare: args(FFMPEG_RUNNING) });
  t.equal(rec.sup.status().state, 'finished', 'a new process is finished');
  t.equal(rec.sup.status().reconnectSeconds, -1);
  await rec.sup.start();
  const pid = rec.sup.status().pid!;
  t.ok(pid > 0 && alive(pid), 'a real child runs');
  t.equal(rec.sup.status().state, 'running');
  await waitFor(() => rec.lines.some((l) => l.startsWith('frame=')), { what: 'progress lines split on \\r' });
  t.ok(rec.lines.some((l) => l.includes('Stream #0:0')), 'prelude lines arrive too');
  t.notOk(rec.lines.some((l) => l.includes('\r') || l.includes('\n') || l === ''), 'no line holds a break or is empty');
  await waitFor(() => rec.sup.status().memoryBytes > 1e6, { what: 'RSS sampled' });
  t.ok(rec.sup.status().runtimeSeconds > 0);

  await rec.sup.start();
  t.equal(rec.sup.status().pid, pid, 'start while running is a no-op');

  await rec.sup.stop();
  t.same(rec.states, ['finished', 'starting', 'running', 'finishing', 'finished']);
  t.same(rec.runEnds, [{ state: 'finished', exitCode: 255, signal: null, reason: undefined }]);
  t.equal(rec.sup.status().pid, undefined, 'no pid after stop');
  t.throws(() => process.kill(pid, 0), 'the child is gone and reaped');
  t.equal(rec.sup.status().memoryBytes, 0);
  t.equal(rec.sup.status().runtimeSeconds, 0);
  await rec.sup.stop();
  t.equal(rec.states.length, 5, 'stop is idempotent');
});

t.test('sleep killed by SIGINT ends killed', async (t) => {
  const rec = supervise(t, { binary: 'sleep', prepare: args(['30']) });
  await rec.sup.start();
  const pid = rec.sup.status().pid!;
  await rec.sup.stop();
  t.same(rec.states, ['finished', 'starting', 'running', 'finishing', 'killed']);
  t.equal(rec.runEnds[0]!.signal, 'SIGINT');
  t.notOk(alive(pid));
});

t.test('a program that exits 0 is finished and stays finished (even with reconnect)', async (t) => {
  const rec = supervise(t, { binary: 'sh', prepare: args(['-c', 'echo done >&2; exit 0']), reconnect: true, reconnectDelaySeconds: 30 });
  await rec.sup.start();
  await waitFor(() => rec.runEnds.length === 1, { what: 'the run ended' });
  t.equal(rec.sup.status().state, 'finished');
  t.same(rec.lines, ['done']);
  const wait = rec.sup.status().reconnectSeconds;
  t.ok(wait > 25 && wait <= 30, `reconnect applies to any exit not caused by stop (in ${wait} s)`);
  await rec.sup.stop();
  t.equal(rec.sup.status().reconnectSeconds, -1, 'stop cancels the pending reconnect');
  t.equal(rec.sup.status().state, 'finished');
});

t.test('exit with an error code is failed', async (t) => {
  const rec = supervise(t, { binary: 'sh', prepare: args(['-c', 'exit 3']) });
  await rec.sup.start();
  await waitFor(() => rec.runEnds.length === 1, { what: 'run end' });
  t.same(rec.states, ['finished', 'starting', 'running', 'failed']);
  t.same(rec.runEnds[0], { state: 'failed', exitCode: 3, signal: null, reason: undefined });
  t.equal(rec.sup.status().reconnectSeconds, -1, 'no reconnect without reconnect=true');
});

t.test('a nonexistent binary is failed, without and with reconnect', async (t) => {
  const once = supervise(t, { binary: '/nonexistent/encoder' });
  await once.sup.start();
  await waitFor(() => once.sup.status().state === 'failed', { what: 'failed' });
  t.same(once.states, ['finished', 'starting', 'failed']);
  t.match(once.sup.status().lastReason, /ENOENT/);
  t.equal(once.sup.status().pid, undefined);

  const retry = supervise(t, { binary: '/nonexistent/encoder', reconnect: true, reconnectDelaySeconds: 0 });
  await retry.sup.start();
  await waitFor(() => retry.runStarts >= 2, { what: 'a second attempt' });
  t.equal(retry.runEnds[0]!.state, 'failed');
  t.ok(retry.runStarts <= 3, `delay 0 does not spin (${retry.runStarts} attempts)`);
  await retry.sup.stop();
  t.equal(retry.sup.status().reconnectSeconds, -1);
});

t.test('a program ignoring SIGINT is finishing, then killed after the grace', async (t) => {
  const rec = supervise(t, { binary: 'sh', prepare: args(['-c', 'trap "" INT; echo ready >&2; sleep 30']), stopGraceMs: 800 });
  await rec.sup.start();
  await waitFor(() => rec.lines.includes('ready'), { what: 'the trap is set' });
  const pid = rec.sup.status().pid!;
  await rec.sup.stop();
  t.same(rec.states, ['finished', 'starting', 'running', 'finishing', 'killed']);
  t.ok(gap(rec, 'finishing', 'killed') >= 790, `finishing for ${gap(rec, 'finishing', 'killed')} ms: SIGKILL only after the grace`);
  t.equal(rec.runEnds[0]!.signal, 'SIGKILL');
  t.notOk(alive(pid), 'the shell is gone');
  t.equal(rec.sup.status().pid, undefined);
});

t.test('prepare() veto: failed with the reason, no spawn, no reconnect; restart retries', async (t) => {
  let veto = true;
  const rec = supervise(t, {
    binary: 'sleep',
    reconnect: true,
    prepare: async () => {
      if (veto) throw new Error('vetoed by policy');
      return ['30'];
    },
  });
  await rec.sup.start();
  t.same(rec.states, ['finished', 'starting', 'failed']);
  t.equal(rec.sup.status().lastReason, 'vetoed by policy');
  t.equal(rec.sup.status().pid, undefined, 'nothing spawned');
  t.equal(rec.sup.status().reconnectSeconds, -1, 'a veto is not retried');
  t.same(rec.runEnds, [{ state: 'failed', exitCode: null, signal: null, reason: 'vetoed by policy' }]);

  veto = false;
  await rec.sup.restart();
  t.equal(rec.sup.status().state, 'running');
  t.ok(rec.sup.status().pid);
});

t.test('restart without reconnect brings the process back', async (t) => {
  const rec = supervise(t, { binary: 'sleep', prepare: args(['30']), reconnect: false });
  await rec.sup.start();
  const first = rec.sup.status().pid!;
  await rec.sup.restart();
  const second = rec.sup.status().pid!;
  t.equal(rec.sup.status().state, 'running');
  t.ok(second && second !== first, 'a new child');
  t.notOk(alive(first), 'the old child is gone');
  t.same(rec.states, ['finished', 'starting', 'running', 'finishing', 'killed', 'starting', 'running']);

  // after a crash without reconnect, restart also brings it back
  process.kill(second, 'SIGKILL');
  await waitFor(() => rec.sup.status().state === 'killed', { what: 'killed by kill -9' });
  t.equal(rec.sup.status().reconnectSeconds, -1);
  await rec.sup.restart();
  t.equal(rec.sup.status().state, 'running');
});

t.test('stop while prepare() is pending: nothing is spawned', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const rec = supervise(t, { binary: 'sleep', prepare: async () => { await gate; return ['30']; } });
  const starting = rec.sup.start();
  await waitFor(() => rec.sup.status().state === 'starting', { what: 'starting' });
  const stopping = rec.sup.stop();
  release();
  await Promise.all([starting, stopping]);
  t.equal(rec.sup.status().pid, undefined);
  t.same(rec.states, ['finished', 'starting', 'finishing', 'finished']);
});

t.test('destroy() kills the child and leaves no timer', async (t) => {
  const rec = supervise(t, { binary: 'sh', prepare: args(['-c', 'trap "" INT; echo ready >&2; sleep 30']), reconnect: true });
  await rec.sup.start();
  await waitFor(() => rec.lines.includes('ready'), { what: 'the trap is set' });
  const pid = rec.sup.status().pid!;
  await rec.sup.destroy();
  t.notOk(alive(pid));
  t.equal(rec.sup.status().reconnectSeconds, -1, 'no reconnect after destroy');
  await rec.sup.start();
  t.equal(rec.sup.status().pid, undefined, 'a destroyed supervisor does not start again');
});
