import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { silentServer } from '../../helpers/net-proc.ts';
import { addProcess, nullProcess, state, waitState } from './helpers.ts';

t.test('an input that connects and never sends is stopped by the stale timeout and retried', async (t) => {
  let connections = 0;
  const port = await silentServer(t, () => { connections++; });

  const app = await startApp(t);
  await addProcess(app, nullProcess('silent', {
    autostart: true, reconnect: true, reconnect_delay_seconds: 1, stale_timeout_seconds: 2,
    input: [{ id: 'in', address: `tcp://127.0.0.1:${port}`, options: ['-f', 'mpegts'] }],
  }));
  await waitFor(() => connections >= 1, { what: 'first connection' });
  const stopped = await waitState(app, 'silent', (s) => s.exec === 'killed', 'killed by the stale watchdog', 15_000);
  t.equal(stopped.order, 'start', 'the order stays start');
  const rep = (await app.request('GET', '/api/v3/process/silent/report')).body;
  const lines = [...rep.log, ...rep.history.flatMap((h: { log: unknown[] }) => h.log)].map((e: unknown) => (e as string[])[1]);
  t.ok(lines.some((l) => /stale/.test(l)), 'the report says why');
  await waitFor(() => connections >= 2, { what: 'a retry after the reconnect delay', timeout: 15_000 });
  t.pass(`retried (${connections} connections)`);
});

t.test('audio-only progress counts: a stale timeout does not stop a healthy audio process', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('audio', {
    autostart: true, stale_timeout_seconds: 2,
    input: [{ id: 'a', address: 'sine=frequency=440:sample_rate=8000', options: ['-re', '-f', 'lavfi'] }],
  }));
  const first = await waitState(app, 'audio', (s) => s.exec === 'running' && s.progress.time > 0, 'audio progress');
  await waitFor(async () => (await state(app, 'audio')).progress.time >= first.progress.time + 4, { what: '4 more seconds of audio', timeout: 15_000 });
  const s = await state(app, 'audio');
  t.equal(s.exec, 'running', 'still running after twice the stale timeout');
  t.ok(s.runtime_seconds >= 4);
});

t.test('a memory limit stops the process', async (t) => {
  const app = await startApp(t);
  await addProcess(app, nullProcess('greedy', { autostart: true, limits: { memory_mbytes: 5, waitfor_seconds: 0 } }));
  const s = await waitState(app, 'greedy', (x) => x.exec === 'killed', 'killed for its memory', 15_000);
  t.equal(s.order, 'start');
  t.equal(s.reconnect_seconds, -1, 'no reconnect configured');
  const rep = (await app.request('GET', '/api/v3/process/greedy/report')).body;
  t.ok(rep.log.some((e: string[]) => /memory limit/.test(e[1]!)), 'the report says why');
  const cfg = (await app.request('GET', '/api/v3/process/greedy/config')).body;
  t.same(cfg.limits, { cpu_usage: 0, memory_mbytes: 5, waitfor_seconds: 0 });
});
