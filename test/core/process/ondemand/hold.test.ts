import t from 'tap';
import { processClockRef, streamTableRef } from '../../../../sdk/index.ts';
import { inProcessApp } from './in-process.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { FakeClock } from '../fake-clock.ts';

/*
 * A stream reader's wait holds an on-demand run (issue 48: a ladder of a source without audio
 * publishes after ffmpeg's 5 s probe, later than a short idle time): the run a reader's demand
 * started is not stopped as idle while that reader still waits for its first publish; after
 * the wait, the idle time applies as before. In process, the idle time on a clock the test
 * advances; the (trivial) ffmpeg publishes nothing.
 */

const MARKER = 'ondemand-hold-marker';

t.test('no idle stop while a reader still waits for the first publish', async (t) => {
  const clock = new FakeClock(Date.parse('2030-01-07T10:00:00Z'));
  const kit = await inProcessApp(t, [{ ref: processClockRef, impl: clock }]);
  const table = kit.services.get(streamTableRef);
  const body = {
    id: 'hold',
    input: [{ id: 'in', address: 'nullsrc=s=16x16:r=5', options: ['-f', 'lavfi'] }],
    output: [{ id: 'out', address: `rtmp://127.0.0.1:9/${MARKER}`, options: ['-f', 'null'] }],
    autostart: true,
    ondemand: { enable: true, idle_seconds: 1 },
  };
  t.equal((await kit.request('POST', '/api/v3/process', { body })).status, 200);
  /** `stop_at` is RFC 3339 to the second. */
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  const stateOf = async () => (await kit.request('GET', '/api/v3/process/hold/state')).body;
  await waitFor(async () => (await stateOf()).ondemand?.waiting === true, { what: 'waiting' });

  const asked = clock.now();
  const waited = table.whenPublished(MARKER, 3_000);
  await waitFor(async () => (await stateOf()).exec === 'running', { what: 'running' });
  t.equal(Date.parse((await stateOf()).ondemand.stop_at), second(asked + 3_000), 'it stops when the reader gives up, not after its 1 s idle time');
  clock.advance(1_500);
  await new Promise((r) => setTimeout(r, 200));
  t.equal((await stateOf()).exec, 'running', 'past its idle time, the reader still waiting: it runs on');
  clock.advance(2_000);
  await waitFor(async () => {
    const s = await stateOf();
    return s.ondemand?.waiting === true && s.exec !== 'running' && s.exec !== 'finishing' && s.exec !== 'starting';
  }, { what: 'stopped once the wait is over' });
  t.equal(await waited, false, 'the reader got nothing (nothing published)');

  // a demand with no wait: the idle time alone, as before
  void table.whenPublished(MARKER, 1);
  await waitFor(async () => (await stateOf()).exec === 'running', { what: 'running again' });
  t.equal(Date.parse((await stateOf()).ondemand.stop_at), second(clock.now() + 1_000), 'a reader that waited 1 ms: the idle time');
  clock.advance(1_000);
  await waitFor(async () => (await stateOf()).ondemand?.waiting === true, { what: 'waiting again' });
  t.equal(clock.pending, 0, 'no demand timer left');
});
