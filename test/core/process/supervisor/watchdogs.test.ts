import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { UsageSampler, type Sampler, type UsageListener } from '../../../../core/process/supervisor/index.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { alive, args, FFMPEG, FFMPEG_RUNNING, gap, supervise } from './helpers.ts';

t.test('ffmpeg killed with SIGKILL comes back after the reconnect delay', async (t) => {
  const rec = supervise(t, { binary: FFMPEG, prepare: args(FFMPEG_RUNNING), reconnect: true, reconnectDelaySeconds: 1 });
  await rec.sup.start();
  const first = rec.sup.status().pid!;
  process.kill(first, 'SIGKILL');
  await waitFor(() => rec.sup.status().state === 'running' && rec.sup.status().pid !== first, { what: 'a new pid running' });
  const second = rec.sup.status().pid!;
  t.equal(rec.runEnds[0]!.signal, 'SIGKILL');
  t.ok(gap(rec, 'killed', 'starting') >= 950, `restarted ${gap(rec, 'killed', 'starting')} ms after the kill (delay 1 s)`);
  t.ok(alive(second));
  t.equal(rec.sup.status().reconnectSeconds, -1, 'nothing pending while running');
  t.same(rec.states, ['finished', 'starting', 'running', 'killed', 'starting', 'running']);
  await rec.sup.stop();
  t.notOk(alive(second));
  t.equal(rec.sup.status().reconnectSeconds, -1, 'no reconnect after stop');
});

t.test('one shared sampler serves several supervisors and is idle when they stop', async (t) => {
  const sampler = new UsageSampler({ intervalMs: 200 });
  t.teardown(() => sampler.close());
  const a = supervise(t, { binary: 'sleep', prepare: args(['30']), sampler });
  const b = supervise(t, { binary: 'sleep', prepare: args(['30']), sampler });
  await Promise.all([a.sup.start(), b.sup.start()]);
  t.equal(sampler.size, 2);
  await waitFor(() => a.sup.status().memoryBytes > 0 && b.sup.status().memoryBytes > 0, { what: 'both sampled' });
  await Promise.all([a.sup.stop(), b.sup.stop()]);
  t.equal(sampler.size, 0);
});

t.test('stale timeout: a TCP input that never sends is killed and retried', async (t) => {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((s) => {
    connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  });
  const { port } = server.address() as { port: number };
  const rec = supervise(t, {
    binary: FFMPEG,
    prepare: args(['-nostdin', '-hide_banner', '-i', `tcp://127.0.0.1:${port}`, '-f', 'null', '-']),
    staleTimeoutSeconds: 2,
    reconnect: true,
    reconnectDelaySeconds: 1,
  });
  await rec.sup.start();
  await waitFor(() => connections === 1, { what: 'ffmpeg connected' });
  await waitFor(() => rec.runEnds.length === 1, { what: 'the stale run ended', timeout: 15_000 });
  t.equal(rec.runEnds[0]!.state, 'killed');
  t.match(rec.runEnds[0]!.reason, /^stale timeout/);
  t.match(rec.sup.status().lastReason, /^stale timeout/);
  t.same(rec.states.slice(0, 5), ['finished', 'starting', 'running', 'finishing', 'killed']);
  await waitFor(() => connections === 2 && rec.sup.status().state === 'running', { what: 'retried after the reconnect delay' });
  t.ok(gap(rec, 'running', 'finishing') >= 1900, `stale after ${gap(rec, 'running', 'finishing')} ms (timeout 2 s)`);
  t.ok(gap(rec, 'killed', 'starting') >= 950, 'retried after the reconnect delay');
});

t.test('progress (touch) keeps the stale watchdog quiet', async (t) => {
  const rec = supervise(t, { binary: FFMPEG, prepare: args(FFMPEG_RUNNING), staleTimeoutSeconds: 1 }, { touchOn: /^frame=/ });
  await rec.sup.start();
  const pid = rec.sup.status().pid;
  await waitFor(() => rec.sup.status().runtimeSeconds > 3, { what: 'three seconds of running', timeout: 10_000 });
  t.equal(rec.sup.status().state, 'running');
  t.equal(rec.sup.status().pid, pid);
  t.equal(rec.runEnds.length, 0);
});

t.test('memory limit: a growing child is killed after waitfor', async (t) => {
  const grow = 'const a = []; setInterval(() => { if (a.length < 40) a.push(Buffer.alloc(8 << 20, 1)); }, 50)';
  const rec = supervise(t, {
    binary: process.execPath,
    prepare: args(['-e', grow]),
    limits: { cpuUsage: 0, memoryBytes: 150e6, waitforSeconds: 1 },
  });
  await rec.sup.start();
  const pid = rec.sup.status().pid!;
  await waitFor(() => rec.runEnds.length === 1, { what: 'the run ended', timeout: 15_000 });
  t.equal(rec.sup.status().state, 'killed');
  t.match(rec.sup.status().lastReason, /^memory limit exceeded/);
  t.notOk(alive(pid));
  t.equal(rec.sup.status().reconnectSeconds, -1, 'reconnect=false: it stays killed');
});

t.test('cpu limit mechanism: the child over the limit is killed after waitfor, the other is not (injected samples)', async (t) => {
  // The samples come from the test, not the machine: this holds however loaded the machine is.
  const listeners = new Map<number, UsageListener>();
  const sampler: Sampler = {
    watch: (pid, l) => { listeners.set(pid, l); return () => listeners.delete(pid); },
    close: () => listeners.clear(),
  };
  let clock = 0;
  const limits = { cpuUsage: 50, memoryBytes: 0, waitforSeconds: 2 };
  const quiet = supervise(t, { binary: 'sleep', prepare: args(['30']), limits, sampler, now: () => clock });
  const busy = supervise(t, { binary: 'sleep', prepare: args(['30']), limits, sampler, now: () => clock });
  await Promise.all([quiet.sup.start(), busy.sup.start()]);
  const feed = (pid: number, cpu: number) => listeners.get(pid)!(cpu, 1e6);
  const qp = quiet.sup.status().pid!;
  const bp = busy.sup.status().pid!;
  for (const [at, b] of [[0, 90], [1000, 90], [1500, 10], [2000, 90], [3000, 90]] as const) {
    clock = at;
    feed(qp, 49);
    feed(bp, b);
  }
  t.equal(busy.runEnds.length, 0, 'a dip below the limit restarts the waitfor period');
  clock = 4000;
  feed(qp, 49);
  feed(bp, 90);
  await waitFor(() => busy.runEnds.length === 1, { what: 'the busy run ended' });
  t.equal(busy.sup.status().state, 'killed');
  t.match(busy.sup.status().lastReason, /^cpu limit exceeded: 90\.0 % of a core > 50 %/);
  t.notOk(alive(bp));
  t.equal(quiet.sup.status().state, 'running');
  t.equal(quiet.sup.status().cpuUsage, 49);
});

t.test('cpu limit end to end: a spinning child is killed, a sleeping one is not (tolerates a loaded machine)', async (t) => {
  // 2 % of a core: a spinning child gets far more even when it shares two cores with many others.
  const limits = { cpuUsage: 2, memoryBytes: 0, waitforSeconds: 1 };
  const quiet = supervise(t, { binary: 'sleep', prepare: args(['60']), limits });
  const busy = supervise(t, { binary: process.execPath, prepare: args(['-e', 'for (;;) {}']), limits });
  await Promise.all([quiet.sup.start(), busy.sup.start()]);
  await waitFor(() => busy.runEnds.length === 1, { what: 'the busy run ended', timeout: 30_000 });
  t.equal(busy.sup.status().state, 'killed');
  t.match(busy.sup.status().lastReason, /^cpu limit exceeded/);
  t.equal(quiet.sup.status().state, 'running');
});
