import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, command, ffmpegPids } from '../../core/process/helpers.ts';
import { SseClient, type SseEvent } from './sse-client.ts';

const MARK = `events-test-${process.pid}`;

function ev1(): Record<string, unknown> {
  return {
    id: 'ev1', reference: 'cam', autostart: true, reconnect: true, reconnect_delay_seconds: 1,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: '-', options: ['-metadata', `title=${MARK}`, '-f', 'null'] }],
  };
}

const states = (list: SseEvent[]) => list.filter((e) => e.type === 'process.state').map((e) => `${e.payload.from}>${e.payload.to}`);

t.test('SSE: a process starts, its ffmpeg is killed, the reconnect brings it back; resume misses nothing', async (t) => {
  const app = await startApp(t, { config: { events: { heartbeat_ms: 200 } } });
  const base = `${app.url}/api/v3/events`;
  const all = await SseClient.open(base);
  t.teardown(() => all.close());
  t.equal(all.status, 200);
  t.match(all.headers['content-type'], /^text\/event-stream/);
  t.notOk(all.headers['content-encoding'], 'never compressed');
  const procs = await SseClient.open(`${base}?types=process.*&subjects=process:ev1`);
  t.teardown(() => procs.close());

  await addProcess(app, ev1());
  await procs.next((e) => e.type === 'process.added', 'process.added');
  const running = await procs.next((e) => e.type === 'process.state' && e.payload.to === 'running', 'running');
  t.same(running.subject, { process: 'ev1', reference: 'cam' });
  t.same(states(procs.events), ['finished>starting', 'starting>running']);

  const pid = await waitFor(() => ffmpegPids(MARK)[0], { what: 'the ffmpeg pid' });
  process.kill(pid, 'SIGKILL');
  const ended = await procs.next((e) => e.type === 'process.state' && e.payload.from === 'running', 'the end of the run');
  t.match(ended.payload.to, /^(failed|finished|killed)$/);
  t.type(ended.payload.last_logline, 'string');
  const back = await procs.next((e) => e.type === 'process.state' && e.payload.to === 'running' && e.id > ended.id, 'running again');
  const restarted = procs.events.find((e) => e.type === 'process.state' && e.payload.to === 'starting' && e.id > ended.id)!;
  t.equal(restarted.payload.cause, 'reconnect', 'the supervisor says why it started again');
  t.equal(restarted.payload.reason, 'reconnect');
  t.ok(procs.events.some((e) => e.type === 'process.reconnect' && e.id > ended.id && e.id < back.id), 'process.reconnect');
  t.same(states(procs.events).slice(2), [`running>${ended.payload.to}`, `${ended.payload.to}>starting`, 'starting>running']);
  t.ok(procs.events.every((e) => e.subject.process === 'ev1' && e.type.startsWith('process.')), 'the filter holds');

  // disconnect, miss a stop and a start, resume: exactly the missed events, in order
  const last = procs.lastId();
  procs.close();
  t.equal(await command(app, 'ev1', 'stop'), 200);
  const stopped = await all.next((e) => e.type === 'process.state' && e.payload.from === 'finishing' && e.id > back.id, 'stopped');
  t.equal(await command(app, 'ev1', 'start'), 200);
  const again = await all.next((e) => e.type === 'process.state' && e.payload.to === 'running' && e.id > back.id, 'started');
  const resumed = await SseClient.open(`${base}?types=process.*&subjects=process:ev1`, { 'last-event-id': last });
  t.teardown(() => resumed.close());
  await resumed.next((e) => e.id === again.id, 'the resumed stream catches up');
  const expected = all.events.filter((e) => e.type.startsWith('process.') && e.id > Number(last.split('-')[1]) && e.id <= again.id);
  t.same(resumed.events.filter((e) => e.id <= again.id).map((e) => e.id), expected.map((e) => e.id), 'no loss, no duplicate');
  const to = stopped.payload.to as string;
  t.same(states(resumed.events).slice(0, 4), ['running>finishing', `finishing>${to}`, `${to}>starting`, 'starting>running']);

  // the query parameter does the same for EventSource clients
  const byQuery = await SseClient.open(`${base}?types=process.state&last_event_id=${encodeURIComponent(last)}`);
  t.teardown(() => byQuery.close());
  await byQuery.next((e) => e.id === again.id, 'resume by query');
  t.equal(byQuery.events[0]!.id, expected.find((e) => e.type === 'process.state')!.id);

  await waitFor(() => all.comments >= 3, { what: 'heartbeats' });
  const ids = all.events.map((e) => e.id);
  t.same(ids, [...ids].sort((a, b) => a - b), 'ids increase');
  t.equal(new Set(ids).size, ids.length, 'each once');
  t.ok(all.events.every((e) => e.sseId === `${e.boot}-${e.id}`), 'the SSE id is <boot>-<id>');
});

t.test('SSE: auth and filters', async (t) => {
  const app = await startApp(t, { config: { api: { auth: { enable: true, username: 'u', password: 'p', jwt: { secret: 'x'.repeat(32) } } } } });
  t.equal((await app.request('GET', '/api/v3/events')).status, 401, 'behind the API auth');
  const login = await app.request('POST', '/api/login', { body: { username: 'u', password: 'p' } });
  const token = login.body.access_token as string;
  const bad = await app.request('GET', '/api/v3/events?types=%5Bab', { token });
  t.equal(bad.status, 400);
  t.equal(bad.body.code, 400);
  t.match(bad.body.details[0], /malformed glob/);
  const head = await app.request('HEAD', '/api/v3/events', { token });
  t.equal(head.status, 200);
  t.match(head.headers.get('content-type'), /^text\/event-stream/);
  const c = await SseClient.open(`${app.url}/api/v3/events?types=config.*`, { authorization: `Bearer ${token}` });
  t.teardown(() => c.close());
  t.equal(c.status, 200);
  const cfg = await app.request('GET', '/api/v3/config', { token });
  t.equal((await app.request('PUT', '/api/v3/config', { token, body: cfg.body.config })).status, 200);
  const changed = await c.next((e) => e.type === 'config.changed', 'config.changed');
  t.same(changed.subject, {});
});
