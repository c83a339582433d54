import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResourceBudget } from '../../../../core/process/resources/budget.ts';
import { parseMeminfo, parseProcStat, ProcMachineUsage, type MachineUsage } from '../../../../core/process/resources/machine.ts';

/*
 * The resource budget's parts (`resources.max_cpu_usage` / `max_memory_usage`): procfs parsed from
 * recorded lines, and the rule (usage + the process's own limits within both limits) on a machine
 * the test plays, so nothing depends on the box's load.
 */

// recorded on a 2-core Debian 12 VM (first lines of /proc/stat and /proc/meminfo)
const STAT = 'cpu  4705 150 1120 16250 520 0 36 0 0 0\ncpu0 2352 75 560 8125 260 0 18 0 0 0\nintr 123 0\n';
const MEMINFO = 'MemTotal:        8039504 kB\nMemFree:          512340 kB\nMemAvailable:    6029628 kB\nBuffers:           81200 kB\nCached:          5120044 kB\n';

const GIB = 1024 ** 3;

/** A machine whose figures the test sets. */
class PlayedMachine implements MachineUsage {
  cpu = 10;
  memory = 2 * GIB;
  total = 8 * GIB;
  known = true;
  sample() {
    return this.known ? { cpuPercent: this.cpu, memoryBytes: this.memory, memoryTotalBytes: this.total } : undefined;
  }
}

t.test('procfs: busy and total jiffies of all cores, memory in use from MemAvailable', async (t) => {
  t.same(parseProcStat(STAT), { busy: 4705 + 150 + 1120 + 36, total: 4705 + 150 + 1120 + 16250 + 520 + 36 });
  t.equal(parseProcStat('intr 1 2\n'), undefined, 'no cpu line');
  t.same(parseMeminfo(MEMINFO), { used: (8039504 - 6029628) * 1024, total: 8039504 * 1024 });
  // a kernel before 3.14: no MemAvailable, free + buffers + cached instead
  const old = MEMINFO.replace(/^MemAvailable.*\n/m, '');
  t.same(parseMeminfo(old), { used: (8039504 - 512340 - 81200 - 5120044) * 1024, total: 8039504 * 1024 });
  t.equal(parseMeminfo('MemFree: 1 kB\n'), undefined, 'no total');
});

t.test('the procfs sampler: CPU is the busy share between two reads', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'budget-proc-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'stat'), 'cpu  100 0 100 800 0 0 0 0 0 0\n');
  await writeFile(join(root, 'meminfo'), MEMINFO);
  const m = new ProcMachineUsage(root);
  t.match(m.sample(), { cpuPercent: 20, memoryTotalBytes: 8039504 * 1024 }, 'the first read: since boot');
  await writeFile(join(root, 'stat'), 'cpu  175 0 175 850 0 0 0 0 0 0\n');
  await new Promise((r) => setTimeout(r, 550));
  t.match(m.sample(), { cpuPercent: 75 }, '150 busy of 200 jiffies since');
  t.ok((m.sample()?.cpuPercent ?? 0) === 75, 'asked again at once: the same figures');
  const real = new ProcMachineUsage().sample();
  t.ok(real && real.memoryTotalBytes > 0 && real.cpuPercent >= 0 && real.cpuPercent <= 100, 'this machine reads');
});

t.test('a start fits when usage plus its own limits stays within both limits', async (t) => {
  const m = new PlayedMachine();
  const off = new ResourceBudget({ maxCpu: 0, maxMemory: 0 }, m);
  m.cpu = 99;
  t.equal(off.enabled, false);
  t.equal(off.check({ cpu: 50, memoryBytes: GIB }), undefined, '0 = no limit');

  const b = new ResourceBudget({ maxCpu: 80, maxMemory: 50 }, m);
  m.cpu = 70;
  t.equal(b.check(), undefined, 'cpu 70 % of 80 %, memory 25 % of 50 %');
  t.match(b.check({ cpu: 15, memoryBytes: 0 }), /^resources\.max_cpu_usage: cpu 70\.0 % \+ 15\.0 % > 80\.0 %$/, 'its cpu limit counts');
  t.equal(b.check({ cpu: 0, memoryBytes: 2 * GIB }), undefined, 'exactly at the limit: fits');
  t.match(b.check({ cpu: 0, memoryBytes: 3 * GIB }), /^resources\.max_memory_usage: memory 25\.0 % \+ 37\.5 % > 50\.0 %$/, 'its memory limit counts');
  m.cpu = 81;
  t.equal(b.over, true, 'over without any limit of its own');
  m.known = false;
  t.equal(b.check({ cpu: 100, memoryBytes: 100 * GIB }), undefined, 'nothing known: nothing refused');
});

t.test('a wait ends when the machine gets under, runs out with the reason, or is called off', async (t) => {
  const m = new PlayedMachine();
  const b = new ResourceBudget({ maxCpu: 50, maxMemory: 0 }, m, 20);
  t.teardown(() => b.close());
  m.cpu = 90;
  const ac = new AbortController();
  const admitted = b.wait({ cpu: 0, memoryBytes: 0 }, 5000, ac.signal);
  setTimeout(() => { m.cpu = 30; }, 100);
  t.equal(await admitted, undefined, 'admitted once under');

  m.cpu = 90;
  const t0 = performance.now();
  t.match(await b.wait({ cpu: 0, memoryBytes: 0 }, 150, ac.signal), /cpu 90\.0 %/, 'the reason after the wait');
  t.ok(performance.now() - t0 >= 140, 'waited its time');
  t.match(await b.wait({ cpu: 0, memoryBytes: 0 }, 0, ac.signal), /cpu/, 'no wait: refused at once');

  const off = new AbortController();
  const called = b.wait({ cpu: 0, memoryBytes: 0 }, 60_000, off.signal);
  setTimeout(() => off.abort(), 50);
  t.equal(await called, 'aborted', 'a stop calls it off');

  const closing = b.wait({ cpu: 0, memoryBytes: 0 }, 60_000, new AbortController().signal);
  b.close();
  t.equal(await closing, 'aborted', 'close ends every wait');
});

t.test('listeners hear when the machine goes over and back under', async (t) => {
  const m = new PlayedMachine();
  const b = new ResourceBudget({ maxCpu: 50, maxMemory: 0 }, m, 20);
  t.teardown(() => b.close());
  const heard: boolean[] = [];
  const off = b.onChange(() => heard.push(b.over));
  m.cpu = 70;
  await new Promise((r) => setTimeout(r, 120));
  m.cpu = 20;
  await new Promise((r) => setTimeout(r, 120));
  t.same(heard, [true, false], 'each flip once');
  off();
});
