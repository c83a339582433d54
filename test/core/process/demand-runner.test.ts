import t from 'tap';
import { DemandRunner } from '../../../core/process/demand-runner.ts';
import { FakeClock } from './fake-clock.ts';

/*
 * The demand runner alone, on a clock the test moves (demand-runner.ts): a run that ended by
 * itself with nothing to bring it back waits again, and the next demand starts it, but no sooner
 * than 2 s after it ended (a source failing at once is not respawned per request); a demand
 * meanwhile is kept for then. A run the supervisor brings back itself (a restart, a reconnect)
 * is left alone.
 */

function runner(settled = () => true) {
  const clock = new FakeClock(1_000_000);
  const seen = { starts: 0, waiting: 0 };
  const r = new DemandRunner({
    clock, idleSeconds: 30, start: () => { seen.starts++; }, stop: async () => {}, attached: () => 1, viewers: () => 0,
    told: () => undefined, waiting: () => { seen.waiting++; }, settled,
  });
  return { r, clock, seen };
}
const tick = () => new Promise((res) => setImmediate(res));

t.test('a run that ended by itself waits again; the next demand starts it 2 s after the end', async (t) => {
  const { r, clock, seen } = runner();
  r.arm();
  t.ok(r.demand('hls'));
  t.equal(seen.starts, 1);
  r.ended();
  await tick();
  t.notOk(r.running, 'waiting again (a reader still attached kept it "running")');
  t.equal(seen.waiting, 2, 'the waiting playlist goes up again');
  t.ok(r.demand('hls'), 'a demand at once counts');
  t.equal(seen.starts, 1, 'but starts nothing yet');
  r.demand('hls');
  clock.advance(1999);
  t.equal(seen.starts, 1);
  clock.advance(1);
  t.equal(seen.starts, 2, 'the demand kept is served 2 s after the end: one start');
  t.ok(r.running);
});

t.test('a run the supervisor brings back itself is left alone; a disarm drops a kept demand', async (t) => {
  let settled = false;
  const { r, clock, seen } = runner(() => settled);
  r.arm();
  r.demand('stream');
  r.ended();
  await tick();
  t.ok(r.running, 'a restart or reconnect under way: still running');
  settled = true;
  r.ended();
  await tick();
  t.notOk(r.running);
  r.demand('stream');
  r.disarm();
  clock.advance(5000);
  t.equal(seen.starts, 1, 'disarmed: the kept demand starts nothing');
  t.equal(clock.pending, 0, 'no timer left');
});
