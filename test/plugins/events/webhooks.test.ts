import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { eventsRef, type EventsService } from '../../../sdk/index.ts';
import { signature } from '../../../plugins/events/webhook.ts';
import { cleanEnv, startApp, type TestApp, type TestLike } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

interface Received { body: string; headers: IncomingMessage['headers']; status?: number }

/** A loopback webhook target; `answer` decides each reply (undefined: never answers). */
async function target(t: TestLike, answer: (n: number) => number | undefined) {
  const got: Received[] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => { body += c; });
    req.on('end', () => {
      const status = answer(got.length + 1);
      got.push({ body, headers: req.headers, status });
      if (status === undefined) held.push(res);
      else res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => { for (const res of held) res.destroy(); server.closeAllConnections(); server.close(() => r()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

const bus = (app: TestApp) => app.service.app.kernel.services.resolve(eventsRef) as EventsService;

t.test('webhook: two 500s, then 200: each event once, signed, in order', async (t) => {
  const hook = await target(t, (n) => (n <= 2 ? 500 : 200));
  const app = await startApp(t, { config: { events: { webhooks: [{ url: hook.url, types: ['test.*'], secret: 's3cret' }] } } });
  for (let i = 1; i <= 5; i++) bus(app).emit('test.ping', { n: String(i) }, { i });
  bus(app).emit('other.ignored', {});

  const states = async () => (await app.request('GET', '/api/v3/events/webhooks')).body;
  const s = await waitFor(async () => ((await states())[0].delivered === 5 ? (await states())[0] : undefined), { what: '5 deliveries' });
  t.match(s, { url: hook.url, queued: 0, delivered: 5, failed: 0, dropped: 0, last_status: 200, last_error: '', types: ['test.*'] });
  t.equal(hook.got.length, 7, 'two failed attempts, five deliveries');
  t.equal(hook.got[0]!.body, hook.got[2]!.body, 'the failed event is sent again');
  const delivered = hook.got.slice(2).map((r) => JSON.parse(r.body));
  t.same(delivered.map((e) => e.payload.i), [1, 2, 3, 4, 5], 'each once, in order');
  for (const r of hook.got) {
    t.equal(r.headers['x-core-signature'], signature('s3cret', r.body), 'valid signature');
    t.equal(r.headers['content-type'], 'application/json');
    const e = JSON.parse(r.body);
    t.equal(r.headers['x-core-event-id'], `${e.boot}-${e.id}`);
    t.equal(r.headers['x-core-event-type'], 'test.ping');
    t.match(r.headers['x-core-timestamp'], /^\d+$/);
  }
});

t.test('webhook: the queue is bounded, the oldest dropped and counted; nothing blocks emit', async (t) => {
  const hook = await target(t, () => undefined);
  const app = await startApp(t, { config: { events: { webhook_queue: 2, webhooks: [{ url: hook.url }] } } });
  // what the service emitted at start may be queued too: count from a clean state
  await waitFor(() => hook.got.length === 1, { what: 'the first request in flight' });
  for (let i = 0; i < 10; i++) bus(app).emit('test.flood', {}, { i });
  const s = await waitFor(async () => {
    const w = (await app.request('GET', '/api/v3/events/webhooks')).body[0];
    return w.queued === 3 && w.dropped >= 8 ? w : undefined;
  }, { what: 'drops counted' });
  t.equal(s.delivered, 0);
  t.equal(s.queued, 3, 'one in flight and two queued');
  t.equal(hook.got.length, 1, 'one request in flight per target');
});

t.test('webhook config is validated', async (t) => {
  const app = await startApp(t);
  const cfg = (await app.request('GET', '/api/v3/config')).body.config;
  cfg.events.webhooks = [{ url: 'ftp://example.com/x', types: ['[ab'], subjects: [], secret: '' }];
  const r = await app.request('PUT', '/api/v3/config', { body: cfg });
  t.equal(r.status, 409);
  t.match(r.body['events.webhooks.0.url'], [/not an http\(s\) URL/]);
  t.match(r.body['events.webhooks.0.types'], [/malformed glob/]);
});

t.test('webhooks from the environment: JSON objects separated by |', async (t) => {
  const env = cleanEnv({ CORE_EVENTS_WEBHOOKS: '{"url":"http://127.0.0.1:9/a","types":["process.*"]}|{"url":"http://u:p@127.0.0.1:9/b"}' });
  const app = await startApp(t, { env });
  const list = (await app.request('GET', '/api/v3/events/webhooks')).body;
  t.same(list.map((w: { url: string; types: string[] }) => [w.url, w.types]), [
    ['http://127.0.0.1:9/a', ['process.*']], ['http://***@127.0.0.1:9/b', []],
  ], 'credentials masked');
});

t.test('a config reload hands a target its unsent events: none lost, none twice', async (t) => {
  let up = false;
  const hook = await target(t, () => (up ? 200 : 503));
  const app = await startApp(t, { config: { events: { webhooks: [{ url: hook.url, types: ['test.*', 'service.stopping', 'config.reloaded'] }] } } });
  bus(app).emit('test.pending', {}, { n: 1 });
  await waitFor(() => hook.got.length >= 1, { what: 'the first attempt' });
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  // the new app has emitted config.reloaded (it does once listening)
  await waitFor(() => {
    let seen = false;
    bus(app).subscribe({ types: ['config.reloaded'] }, '0', () => { seen = true; }).close();
    return seen;
  }, { what: 'the reloaded service' });
  up = true;
  bus(app).emit('test.after', {}, { n: 2 });
  const delivered = () => (app.request('GET', '/api/v3/events/webhooks')).then((r) => r.body[0].delivered as number);
  await waitFor(async () => (await delivered()) === 4, { what: 'four deliveries by the new app' });
  const ok = hook.got.filter((r) => r.status === 200).map((r) => JSON.parse(r.body).type);
  t.same(ok, ['test.pending', 'service.stopping', 'config.reloaded', 'test.after'], 'in order, each once');

  // the delivery state goes on over a reload: 4 so far, then the reload's stopping and reloaded
  t.equal((await app.request('GET', '/api/v3/config/reload')).status, 200);
  await waitFor(async () => (await delivered()) === 6, { what: 'the counters carried over the second reload' });
  t.equal((await app.request('GET', '/api/v3/events/webhooks')).body[0].last_status, 200);
});
