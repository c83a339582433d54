import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { silentServer } from '../../helpers/net-proc.ts';
import { addProcess, nullProcess } from '../../core/process/helpers.ts';
import { SseClient } from './sse-client.ts';

t.test('process events: added, updated, deleted; stale and limit kills with their reasons', async (t) => {
  const port = await silentServer(t);
  const app = await startApp(t);
  const c = await SseClient.open(`${app.url}/api/v3/events?types=process.*`);
  t.teardown(() => c.close());

  await addProcess(app, nullProcess('p1', { reference: 'r1' }));
  t.equal((await app.request('PUT', '/api/v3/process/p1', { body: { id: 'p2' } })).status, 200);
  t.equal((await app.request('DELETE', '/api/v3/process/p2')).status, 200);
  const del = await c.next((e) => e.type === 'process.deleted', 'process.deleted');
  t.same(c.events.filter((e) => e.id <= del.id).map((e) => [e.type, e.subject.process]), [
    ['process.added', 'p1'], ['process.updated', 'p2'], ['process.deleted', 'p2'],
  ]);
  t.equal(c.events[1]!.payload.previous_id, 'p1');
  t.equal(c.events[1]!.subject.reference, 'r1');

  await addProcess(app, nullProcess('silent', {
    autostart: true, stale_timeout_seconds: 2,
    input: [{ id: 'in', address: `tcp://127.0.0.1:${port}`, options: ['-f', 'mpegts'] }],
  }));
  await addProcess(app, nullProcess('greedy', { autostart: true, limits: { memory_mbytes: 5, waitfor_seconds: 0 } }));
  const stale = await c.next((e) => e.type === 'process.stale', 'process.stale');
  t.equal(stale.subject.process, 'silent');
  t.match(stale.payload.reason, /stale timeout/);
  const limit = await c.next((e) => e.type === 'process.limit', 'process.limit');
  t.equal(limit.subject.process, 'greedy');
  t.match(limit.payload.reason, /memory limit/);
  const killed = c.events.find((e) => e.type === 'process.state' && e.subject.process === 'greedy' && e.payload.to === 'killed')!;
  t.equal(killed.payload.cause, 'limit');
  t.ok(killed.id < limit.id, 'the state change comes first');
});
