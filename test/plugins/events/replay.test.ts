import t from 'tap';
import { eventsRef, type EventsService } from '../../../sdk/index.ts';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { SseClient } from './sse-client.ts';

// a replay larger than a batch (a quarter of the client buffer) used to be written before the headers:
// no Content-Type, ERR_HTTP_HEADERS_SENT, and the stream never got a later event
t.test('a resume whose replay passes a batch gets its headers, every held event, then the live ones', async (t) => {
  const app = await startApp(t, { config: { events: { client_buffer_kbytes: 16, history: 500 } } });
  const bus = app.service.app.kernel.services.resolve(eventsRef) as EventsService;
  const pad = 'x'.repeat(200);
  for (let n = 0; n < 120; n++) bus.emit('test.held', {}, { n, pad });
  await new Promise((r) => setImmediate(r));

  const c = await SseClient.open(`${app.url}/api/v3/events?last_event_id=0&types=test.*`);
  t.teardown(() => c.close());
  t.equal(c.status, 200);
  t.match(c.headers['content-type'], /^text\/event-stream/, 'the headers went first');
  const last = await c.next((e) => e.type === 'test.held' && e.payload.n === 119, 'the last held event');
  t.ok(last);
  t.same(c.events.filter((e) => e.type === 'test.held').map((e) => e.payload.n), [...Array(120).keys()], 'every held event once, in order');
  bus.emit('test.live', {}, {});
  await c.next((e) => e.type === 'test.live', 'a live event after the replay');
});

t.test('a resume that does not read its replay is dropped once later events pass the bound; the queue stays bounded', async (t) => {
  const app = await startApp(t, { config: { events: { client_buffer_kbytes: 16, overflow_grace_ms: 60_000, history: 2000 } } });
  const bus = app.service.app.kernel.services.resolve(eventsRef) as EventsService;
  const pad = 'x'.repeat(1000);
  for (let n = 0; n < 2000; n++) bus.emit('test.held', {}, { n, pad });
  await new Promise((r) => setImmediate(r));
  const c = await SseClient.open(`${app.url}/api/v3/events?last_event_id=0`);
  t.teardown(() => c.close());
  c.res!.pause();
  const status = async () => (await app.request('GET', '/api/v3/events/status')).body;
  await waitFor(async () => {
    for (let i = 0; i < 50; i++) bus.emit('test.live', {}, { pad });
    await new Promise((r) => setImmediate(r));
    return (await status()).streams.dropped === 1;
  }, { timeout: 60_000, interval: 10, what: 'the reader dropped' });
  const s = await status();
  t.ok(s.streams.peak_queued_bytes <= 16 * 1024 * 1.25 + 2048, `the queue stayed bounded (${s.streams.peak_queued_bytes} bytes)`);
  c.res!.resume();
  await waitFor(() => c.ended, { what: 'the stream ends' });
  t.equal(c.events.at(-1)!.type, 'events.overflow', 'the last event says why');
  t.same(c.events.filter((e) => e.type === 'test.held').map((e) => e.payload.n), [...Array(c.events.filter((e) => e.type === 'test.held').length).keys()], 'the replay came in order, whole blocks');
});
