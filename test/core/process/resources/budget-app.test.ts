import t, { type Test } from 'tap';
import { eventsRef, type CoreEvent } from '../../../../sdk/index.ts';
import { machineUsageRef, type MachineUsage } from '../../../../core/process/resources/machine.ts';
import { createTestApp, override, type TestApp } from '../../../../testkit/index.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { command, nullProcess, state, waitState } from '../helpers.ts';

/*
 * The resource budget in the engine (`resources.*`) on a machine the test plays (machineUsageRef
 * overridden, real ffmpeg): the `start` command is refused with 503 while over it; a start the
 * engine makes waits (state `starting`, a log line) and runs once the machine is under; a wait
 * that runs out ends `failed` (cause `budget`); each wait and refusal is an event.
 */

const GIB = 1024 ** 3;

class PlayedMachine implements MachineUsage {
  cpu = 90;
  sample() {
    return { cpuPercent: this.cpu, memoryBytes: 2 * GIB, memoryTotalBytes: 8 * GIB };
  }
}

async function kitWith(t: Test, machine: PlayedMachine, waitSeconds: number): Promise<{ kit: TestApp; events: CoreEvent[] }> {
  const kit = await createTestApp({
    t, plugins: ['events'], overrides: [override(machineUsageRef, machine)],
    config: { resources: { max_cpu_usage: 50, max_memory_usage: 0, wait_seconds: waitSeconds } },
  });
  const events: CoreEvent[] = [];
  const sub = kit.services.get(eventsRef).subscribe({ types: ['process.*'] }, undefined, (e) => events.push(e));
  t.teardown(() => sub.close());
  return { kit, events };
}

/** The first event that satisfies `pred` (events reach a subscriber on the next turn of the loop). */
function eventOf(events: CoreEvent[], pred: (e: CoreEvent) => boolean, what: string): Promise<CoreEvent> {
  return waitFor(async () => events.find(pred), { what, timeout: 5000 });
}

t.test('the start command over the budget: 503 with an Error body, nothing changes; under it the process runs', async (t) => {
  const machine = new PlayedMachine();
  const { kit, events } = await kitWith(t, machine, 60);
  const add = await kit.request('POST', '/api/v3/process', { body: nullProcess('bud-cmd') });
  t.equal(add.status, 200, add.text);
  const r = await kit.request('PUT', '/api/v3/process/bud-cmd/command', { body: { command: 'start' } });
  t.equal(r.status, 503, r.text);
  t.match(r.body, { code: 503, message: 'Service Unavailable' });
  t.match(r.body.details[0], /over the resource budget \(resources\.max_cpu_usage: cpu 90\.0 % \+ 0\.0 % > 50\.0 %\); retry later/);
  const s = await state(kit, 'bud-cmd');
  t.same([s.order, s.exec], ['stop', 'finished'], 'the order stays stop, nothing runs');
  t.match(await eventOf(events, (e) => e.type === 'process.budget.refuse', 'the refusal'), {
    subject: { process: 'bud-cmd' }, payload: { start: 'start', reason: /max_cpu_usage/ },
  }, 'an event says so');
  // a process's own limit counts: 40 % + 15 % of its own is over 50 %
  machine.cpu = 40;
  const limited = await kit.request('POST', '/api/v3/process', { body: nullProcess('bud-lim', { limits: { cpu_usage: 15, memory_mbytes: 0, waitfor_seconds: 5 } }) });
  t.equal(limited.status, 200, limited.text);
  t.equal(await command(kit, 'bud-lim', 'start'), 503, 'its own cpu limit does not fit');
  t.equal(await command(kit, 'bud-cmd', 'start'), 200, 'without limits of its own it fits');
  await waitState(kit, 'bud-cmd', (x) => x.exec === 'running', 'running');
  t.equal(await command(kit, 'bud-cmd', 'stop'), 200);
});

t.test('an autostart over the budget waits, visibly, and runs once the machine is under', async (t) => {
  const machine = new PlayedMachine();
  const { kit, events } = await kitWith(t, machine, 60);
  const add = await kit.request('POST', '/api/v3/process', { body: nullProcess('bud-wait', { autostart: true }) });
  t.equal(add.status, 200, 'an add is saved: its start waits');
  const waiting = await waitState(kit, 'bud-wait', (x) => /waiting up to 60 s for the resource budget/.test(x.last_logline), 'waiting');
  t.same([waiting.order, waiting.exec], ['start', 'starting'], 'it waits in starting');
  t.match(await eventOf(events, (e) => e.type === 'process.budget.wait', 'the wait'), { subject: { process: 'bud-wait' }, payload: { start: 'start', reason: /cpu 90\.0 %/ } });
  machine.cpu = 20;
  await waitState(kit, 'bud-wait', (x) => x.exec === 'running', 'running once under', 10_000);
  t.notOk(events.some((e) => e.type === 'process.budget.refuse'), 'nothing refused');
});

t.test('a stop calls a waiting start off; a wait that runs out ends failed with cause budget', async (t) => {
  const machine = new PlayedMachine();
  const { kit, events } = await kitWith(t, machine, 1);
  await kit.request('POST', '/api/v3/process', { body: nullProcess('bud-stop', { autostart: true }) });
  await waitState(kit, 'bud-stop', (x) => x.exec === 'starting', 'waiting');
  t.equal(await command(kit, 'bud-stop', 'stop'), 200, 'a stop answers at once');
  t.equal((await state(kit, 'bud-stop')).exec, 'finished', 'and the start is off');

  await kit.request('POST', '/api/v3/process', { body: nullProcess('bud-out', { autostart: true, reconnect: false }) });
  const failed = await waitState(kit, 'bud-out', (x) => x.exec === 'failed', 'failed after its wait', 10_000);
  t.match(failed.last_logline, /over the resource budget: resources\.max_cpu_usage/);
  t.equal(failed.order, 'start', 'the order stays');
  t.match(await eventOf(events, (e) => e.type === 'process.state' && e.subject.process === 'bud-out' && e.payload.to === 'failed', 'failed'),
    { payload: { cause: 'budget' } });
  t.match(await eventOf(events, (e) => e.type === 'process.budget.refuse' && e.subject.process === 'bud-out', 'refused'), { payload: { start: 'start' } });
});
