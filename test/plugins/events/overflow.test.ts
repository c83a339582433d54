import t from 'tap';
import { eventsRef, type EventsService } from '../../../sdk/index.ts';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SseClient } from './sse-client.ts';

const LIMIT_KB = 16;

t.test('a client that stops reading is dropped with events.overflow; the server queue stays bounded', async (t) => {
  const app = await startApp(t, { config: { events: { client_buffer_kbytes: LIMIT_KB, overflow_grace_ms: 60_000, history: 100 } } });
  const bus = app.service.app.kernel.services.resolve(eventsRef) as EventsService;
  const status = async () => (await app.request('GET', '/api/v3/events/status')).body;
  const slow = await SseClient.open(`${app.url}/api/v3/events`);
  t.teardown(() => slow.close());
  const fast = await SseClient.open(`${app.url}/api/v3/events?types=test.mark`);
  t.teardown(() => fast.close());
  await waitFor(async () => (await status()).streams.open === 2, { what: 'two streams' });
  slow.res!.pause();

  // the kernel's socket buffers take a few MB first: emit until the server gives up on the client
  const pad = 'x'.repeat(1000);
  let sent = 0;
  await waitFor(async () => {
    for (let i = 0; i < 500; i++) bus.emit('test.bulk', {}, { pad, n: sent++ });
    bus.emit('test.mark', {}, { sent });
    await new Promise((r) => setImmediate(r));
    return (await status()).streams.dropped === 1;
  }, { timeout: 60_000, interval: 10, what: 'the slow client dropped' });

  const s = await status();
  t.equal(s.streams.open, 1, 'the fast client stays');
  t.equal(s.streams.limit_bytes, LIMIT_KB * 1024);
  t.ok(s.streams.peak_queued_bytes <= LIMIT_KB * 1024 * 1.25 + 2048, `the queue stayed bounded (${s.streams.peak_queued_bytes} bytes)`);
  t.ok(s.history.size <= 100, 'the history is bounded');

  slow.res!.resume();
  await waitFor(() => slow.ended, { what: 'the slow stream ends' });
  const last = slow.events.at(-1)!;
  t.equal(last.type, 'events.overflow', 'the last event says why');
  t.equal(last.payload.limit_bytes, LIMIT_KB * 1024);
  t.equal(last.sseId, undefined, 'no id: a resume starts after the last real event');
  const marks = fast.events.length;
  bus.emit('test.mark', {}, {});
  await waitFor(() => fast.events.length === marks + 1, { what: 'the fast client still gets events' });
});
