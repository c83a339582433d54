import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SseClient } from './sse-client.ts';

t.test('a config reload keeps the history and the ids: a resumed stream sees stopping and reloaded', async (t) => {
  const app = await startApp(t);
  const first = await SseClient.open(`${app.url}/api/v3/events?last_event_id=0`);
  t.teardown(() => first.close());
  const started = await first.next((e) => e.type === 'service.started', 'service.started from the history');
  t.equal(started.id, 1);
  t.equal(started.payload.port, Number(new URL(app.url).port));
  const last = first.lastId();

  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(() => first.ended, { what: 'the stream ends with the old app' });
  const again = await waitFor(async () => {
    const c = await SseClient.open(`${app.url}/api/v3/events`, { 'last-event-id': last }).catch(() => undefined);
    if (c?.status === 200) return c;
    c?.close();
    return undefined;
  }, { what: 'the reloaded service' });
  t.teardown(() => again.close());
  const reloaded = await again.next((e) => e.type === 'config.reloaded', 'config.reloaded');
  const types = again.events.filter((e) => e.id <= reloaded.id).map((e) => e.type);
  t.equal(types[0], 'service.stopping', 'the stop of the old app, replayed');
  t.equal(types.at(-1), 'config.reloaded');
  t.notOk(types.includes('events.lost'), 'nothing lost');
  t.equal(again.events[0]!.boot, started.boot, 'the same run');
  t.equal(again.events[0]!.id, started.id + 1, 'ids keep counting');
});
