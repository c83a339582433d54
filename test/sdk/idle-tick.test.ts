import t from 'tap';
import { IdleTick } from '../../sdk/idle-tick.ts';
import { waitFor } from '../helpers/wait.ts';

t.test('an IdleTick runs while its job says so, stops when it says no, and a wake starts it again', async (t) => {
  let runs = 0;
  let work = 3;
  const tick = new IdleTick(5, () => ++runs < work);
  t.teardown(() => tick.stop());
  t.notOk(tick.ticking, 'nothing runs before the first wake');
  tick.wake();
  tick.wake();
  t.ok(tick.ticking, 'woken');
  await waitFor(() => !tick.ticking, { what: 'the job saying no' });
  t.equal(runs, 3, 'the timer went with the run that said no (a second wake while ticking started nothing)');
  work = 5;
  tick.wake();
  await waitFor(() => !tick.ticking, { what: 'the second spell ending' });
  t.equal(runs, 5, 'a wake ran it again until its job said no');
  tick.stop();
  tick.wake();
  t.notOk(tick.ticking, 'a wake after stop() starts nothing');
});
