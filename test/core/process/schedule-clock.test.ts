import t, { type Test } from 'tap';
import { eventsRef, processClockRef, type CoreEvent } from '../../../sdk/index.ts';
import { createTestApp, override, type TestApp } from '../../../testkit/index.ts';
import { waitFor } from '../../helpers/wait.ts';
import { FakeClock } from './fake-clock.ts';
import { nullProcess } from './helpers.ts';

/*
 * Schedules on a clock the test advances (in-process through the test kit, real ffmpeg): a cron
 * start and a duration stop each within 1 s of their time, the next start shown in REST (state
 * and the list) and GraphQL, the events with their causes, no reconnect after a duration stop.
 */

const MONDAY_10 = Date.parse('2030-01-07T10:00:00Z');

async function kitWith(t: Test, clock: FakeClock): Promise<{ kit: TestApp; events: CoreEvent[] }> {
  const kit = await createTestApp({ t, plugins: ['events', 'graphql'], overrides: [override(processClockRef, clock)] });
  const events: CoreEvent[] = [];
  const sub = kit.services.get(eventsRef).subscribe({ types: ['process.*'] }, undefined, (e) => events.push(e));
  t.teardown(() => sub.close());
  return { kit, events };
}

async function stateOf(kit: TestApp, id: string): Promise<any> {
  const r = await kit.request('GET', `/api/v3/process/${id}/state`);
  if (r.status !== 200) throw new Error(`state: ${r.status} ${r.text}`);
  return r.body;
}

/** Milliseconds (real time) until the state satisfies `pred`. */
async function msUntil(kit: TestApp, id: string, pred: (s: any) => boolean, what: string): Promise<number> {
  const t0 = performance.now();
  await waitFor(async () => pred(await stateOf(kit, id)), { what, interval: 20, timeout: 15_000 });
  return performance.now() - t0;
}

t.test('a cron schedule starts at its time and its duration stops it, both within 1 s', async (t) => {
  const clock = new FakeClock(MONDAY_10 - 2000);
  const { kit, events } = await kitWith(t, clock);
  const body = nullProcess('weekly', { autostart: true, reconnect: true, scheduler: '0 10 * * 1', runtime_duration_seconds: 60 });
  const add = await kit.request('POST', '/api/v3/process', { body });
  t.equal(add.status, 200, add.text);
  t.equal(add.body.scheduler, '0 10 * * 1');
  t.equal(add.body.runtime_duration_seconds, 60);

  const waiting = await stateOf(kit, 'weekly');
  t.same([waiting.order, waiting.exec, waiting.next_run], ['start', 'finished', '2030-01-07T10:00:00Z'], 'waits, visibly');
  const list = await kit.request('GET', '/api/v3/process?filter=state');
  t.equal(list.body[0].state.next_run, '2030-01-07T10:00:00Z', 'in the list with filter=state');
  const gql = await kit.request('POST', '/api/graph/query', {
    body: { query: '{ process(id: "weekly") { config { scheduler runtime_duration_seconds } state { state next_run } } }' },
  });
  t.same(gql.body.data.process, {
    config: { scheduler: '0 10 * * 1', runtime_duration_seconds: 60 }, state: { state: 'finished', next_run: '2030-01-07T10:00:00Z' },
  }, 'and in GraphQL');
  t.match(events.find((e) => e.type === 'process.scheduled'), { subject: { process: 'weekly' }, payload: { next_run: '2030-01-07T10:00:00Z' } });

  clock.advance(1999);
  t.equal((await stateOf(kit, 'weekly')).exec, 'finished', 'not before its time');
  clock.advance(1);
  t.ok(await msUntil(kit, 'weekly', (s) => s.exec === 'running', 'started') < 1000, 'started within 1 s');
  t.equal((await stateOf(kit, 'weekly')).next_run, '2030-01-14T10:00:00Z', 'the next week is next');
  const started = await waitFor(() => events.find((e) => e.type === 'process.state' && e.payload.to === 'starting'), { what: 'start event' });
  t.match(started.payload, { cause: 'schedule', reason: 'schedule' });

  // ffmpeg stops in order (SIGINT) once it has set up: let it make progress first
  await msUntil(kit, 'weekly', (s) => s.progress.frame > 0, 'progress');
  clock.advance(59_000);
  t.equal((await stateOf(kit, 'weekly')).exec, 'running', 'still running before the end');
  clock.advance(1000);
  t.ok(await msUntil(kit, 'weekly', (s) => s.exec !== 'running', 'stopped') < 1000, 'stopped within 1 s');
  await msUntil(kit, 'weekly', (s) => s.exec === 'finished', 'finished');
  const stopping = await waitFor(() => events.find((e) => e.type === 'process.state' && e.payload.to === 'finishing'), { what: 'stop event' });
  t.match(stopping.payload, { cause: 'duration', reason: 'duration' });

  // reconnect is on, but a stop by the duration is not a crash: it stays down (minimum respawn is 1 s)
  await new Promise((r) => setTimeout(r, 1500));
  const after = await stateOf(kit, 'weekly');
  t.same([after.order, after.exec, after.next_run], ['start', 'finished', '2030-01-14T10:00:00Z'], 'order kept, waiting for next week');

  clock.advance(7 * 86_400_000 - 60_000);
  t.ok(await msUntil(kit, 'weekly', (s) => s.exec === 'running', 'next week') < 1000, 'next week it runs again');
  await msUntil(kit, 'weekly', (s) => s.progress.frame > 0, 'progress');
  t.equal((await kit.request('PUT', '/api/v3/process/weekly/command', { body: { command: 'stop' } })).status, 200);
  await msUntil(kit, 'weekly', (s) => s.exec === 'finished', 'stopped by command');
  const stopped = await stateOf(kit, 'weekly');
  t.same([stopped.order, stopped.next_run], ['stop', undefined], 'a stopped process has no next run');
  t.equal(clock.pending, 0, 'and no timer');
});

t.test('started inside its window (an open run) it starts at once for what is left', async (t) => {
  const clock = new FakeClock(MONDAY_10 - 1000);
  const { kit } = await kitWith(t, clock);
  const body = nullProcess('late', { autostart: false, scheduler: '0 10 * * 1', runtime_duration_seconds: 30 });
  t.equal((await kit.request('POST', '/api/v3/process', { body })).status, 200);
  clock.advance(11_000);
  t.equal((await stateOf(kit, 'late')).exec, 'finished', 'order stop: nothing runs');
  t.equal((await kit.request('PUT', '/api/v3/process/late/command', { body: { command: 'start' } })).status, 200);
  t.ok(await msUntil(kit, 'late', (s) => s.exec === 'running', 'started') < 1000, 'runs at once inside the window');
  await msUntil(kit, 'late', (s) => s.progress.frame > 0, 'progress');
  clock.advance(20_000);
  t.ok(await msUntil(kit, 'late', (s) => s.exec === 'finished', 'window end') < 6000, 'stops when the window closes');
  t.equal((await stateOf(kit, 'late')).order, 'start');
});
