import t from 'tap';
import { eventsRef, processClockRef, streamTableRef, type CoreEvent } from '../../../../sdk/index.ts';
import { inProcessApp } from './in-process.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { FakeClock } from '../fake-clock.ts';
import { ffmpegPids } from '../helpers.ts';

/*
 * 200 demand starts and idle stops of one on-demand process with a real (trivial) ffmpeg, in
 * process through the test kit: demand through the stream table's demand source, idleness on a
 * clock the test advances. No ffmpeg is left, no timer is left, every start and stop has its
 * event, and the state is back to waiting with order `start`.
 */

const CYCLES = 200;
const MARKER = 'ondemand-cycles-marker';

t.test(`${CYCLES} demand start/stop cycles leave no ffmpeg and no lost state`, async (t) => {
  const clock = new FakeClock(Date.parse('2030-01-07T10:00:00Z'));
  const kit = await inProcessApp(t, [{ ref: processClockRef, impl: clock }]);
  const events: CoreEvent[] = [];
  const sub = kit.services.get(eventsRef).subscribe({ types: ['process.demand.*'] }, undefined, (e) => events.push(e));
  t.teardown(() => sub.close());
  const table = kit.services.get(streamTableRef);
  const body = {
    id: 'cyc',
    input: [{ id: 'in', address: 'nullsrc=s=16x16:r=5', options: ['-f', 'lavfi'] }],
    // the null muxer opens nothing: the address only names the stream it stands for
    output: [{ id: 'out', address: `rtmp://127.0.0.1:9/${MARKER}`, options: ['-f', 'null'] }],
    autostart: true,
    ondemand: { enable: true, idle_seconds: 5 },
  };
  const add = await kit.request('POST', '/api/v3/process', { body });
  t.equal(add.status, 200);
  const stateOf = async () => (await kit.request('GET', '/api/v3/process/cyc/state')).body;
  await waitFor(async () => (await stateOf()).ondemand?.waiting === true, { what: 'waiting' });
  const t0 = performance.now();
  for (let i = 0; i < CYCLES; i++) {
    // a reader asks; nothing will publish the name (the wait is bounded), the process starts
    void table.whenPublished(MARKER, 1);
    await waitFor(async () => (await stateOf()).exec === 'running', { what: `cycle ${i}: running`, interval: 5, timeout: 15_000 });
    clock.advance(5_000);
    await waitFor(async () => {
      const s = await stateOf();
      return s.ondemand?.waiting === true && s.exec !== 'running' && s.exec !== 'finishing' && s.exec !== 'starting';
    }, { what: `cycle ${i}: waiting again`, interval: 5, timeout: 15_000 });
  }
  t.comment(`${CYCLES} cycles in ${Math.round(performance.now() - t0)} ms`);
  await waitFor(() => ffmpegPids(MARKER).length === 0, { what: 'no ffmpeg left', timeout: 10_000 });
  t.pass('no ffmpeg left');
  const s = await stateOf();
  t.match(s, { order: 'start', ondemand: { waiting: true, readers: 0, idle_seconds: 5 } }, 'the state is whole');
  t.equal(clock.pending, 0, 'no demand timer left');
  await waitFor(() => events.length === 2 * CYCLES, { what: 'every event' });
  t.equal(events.filter((e) => e.type === 'process.demand.start').length, CYCLES, 'a start event per cycle');
  t.equal(events.filter((e) => e.type === 'process.demand.stop').length, CYCLES, 'a stop event per cycle');
  t.match(events[0], { subject: { process: 'cyc' }, payload: { reason: 'stream' } });
  const cfg = (await kit.request('GET', '/api/v3/process/cyc/config')).body;
  t.same(cfg.ondemand, { enable: true, idle_seconds: 5 }, 'the config is unchanged');
});
