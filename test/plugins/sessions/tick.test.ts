import t from 'tap';
import { pino } from 'pino';
import { SessionRegistry } from '../../../plugins/sessions/registry.ts';
import { waitFor } from '../../helpers/wait.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// issue 46.2: an idle service wakes for nothing; the registry's 1 s tick ran forever before
t.test('the registry ticks only while a collector holds a session or a top rate', async (t) => {
  const registry = new SessionRegistry({
    enable: true, ip_ignorelist: [], session_timeout_sec: 30, persist: false, persist_interval_sec: 0, max_bitrate_mbit: 0, max_sessions: 0,
  }, undefined, pino({ level: 'silent' }));
  const hls = registry.collector('hls', { pendingTimeoutSec: 1 });
  let ticks = 0;
  registry.start(undefined, () => ticks++);
  t.teardown(() => registry.stop());
  await waitFor(() => ticks >= 1, { what: 'the first tick' });
  await sleep(2500);
  t.equal(ticks, 1, 'nothing held: the first tick was the last');
  // a pending session closes after 1 s without activation; the tick runs until then, then stops
  hls.register('viewer-1', { reference: 'x', location: '/memfs/x.m3u8' });
  await waitFor(() => !hls.has('viewer-1'), { timeout: 10_000, what: 'the pending session closed by the tick' });
  const after = ticks;
  t.ok(after >= 2, 'a registration started the tick again');
  await sleep(2500);
  t.equal(ticks, after, 'with the session gone, the tick stopped again');
  // traffic leaves a top rate that decays before the tick stops: the bitrate admission needs it
  hls.register('viewer-2', { reference: 'x', location: '/memfs/x.m3u8' }, true);
  hls.egress('viewer-2', 1_000_000);
  await waitFor(() => hls.topTx > 0, { what: 'the top rate' });
  hls.close('viewer-2');
  const closed = ticks;
  await waitFor(() => ticks >= closed + 2, { what: 'ticks after the last session closed' });
  t.ok(hls.topTx > 0, 'the tick goes on while the top rate decays');
});
