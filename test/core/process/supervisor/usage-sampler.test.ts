import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { UsageSampler } from '../../../../core/process/supervisor/index.ts';
import { waitFor } from '../../../helpers/wait.ts';

function child(t: Test, code: string) {
  const c = spawn(process.execPath, ['-e', code], { stdio: 'ignore' });
  t.teardown(async () => {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGKILL');
      await once(c, 'exit');
    }
  });
  return c;
}

t.test('measures CPU (percent of one core) and RSS of real children with one timer', async (t) => {
  const sampler = new UsageSampler({ intervalMs: 200 });
  t.teardown(() => sampler.close());
  const busy = child(t, 'for (;;) {}');
  const idle = child(t, 'setInterval(() => {}, 1000)');
  const seen = { busy: { cpu: -1, rss: -1 }, idle: { cpu: -1, rss: -1 } };
  const stopBusy = sampler.watch(busy.pid!, (cpu, rss) => { seen.busy = { cpu, rss }; });
  const stopIdle = sampler.watch(idle.pid!, (cpu, rss) => { seen.idle = { cpu, rss }; });
  t.equal(sampler.size, 2);
  // How much CPU the busy child gets depends on the machine's load; that it gets some, and that
  // the figure never exceeds what its own CPU time allows, does not (the exact formula is checked
  // with a fake procfs below).
  await waitFor(() => seen.busy.cpu > 0, { what: 'busy child measured above 0 %', timeout: 20_000 });
  t.ok(seen.busy.cpu <= 110, `busy child ${seen.busy.cpu} % is at most one core (plus rounding)`);
  t.ok(seen.busy.rss > 10e6, `busy child RSS ${seen.busy.rss} is plausible for node`);
  await waitFor(() => seen.idle.cpu >= 0 && seen.idle.cpu < 20 && seen.idle.rss > 10e6, { what: 'idle child measured', timeout: 20_000 });
  // RSS comes from stat in pages; the kernel's own figure in kB must agree (page size learnt right)
  const vmRss = Number(/VmRSS:\s*(\d+) kB/.exec(readFileSync(`/proc/${idle.pid}/status`, 'utf8'))![1]) * 1024;
  t.ok(Math.abs(seen.idle.rss - vmRss) < 0.2 * vmRss, `RSS ${seen.idle.rss} close to VmRSS ${vmRss}`);

  stopBusy();
  busy.kill('SIGKILL');
  await once(busy, 'exit');
  t.equal(sampler.size, 1);
  stopIdle();
  t.equal(sampler.size, 0, 'the timer stops with the last watch (tap would hang on a leaked interval otherwise)');
});

t.test('a vanished pid reports -1 instead of throwing', async (t) => {
  const sampler = new UsageSampler({ intervalMs: 100 });
  t.teardown(() => sampler.close());
  const c = child(t, 'process.exit(0)');
  await once(c, 'exit');
  let got: [number, number] | undefined;
  sampler.watch(c.pid!, (cpu, rss) => { got = [cpu, rss]; });
  await waitFor(() => got, { what: 'a sample' });
  t.same(got, [-1, -1]);
});

t.test("CPU is the child's own CPU time over the elapsed time (fake procfs and clock)", async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'sampler-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, '42'));
  // fields: pid (comm with ') ' inside) state ppid ... utime(14) stime(15) ... rss(24)
  const stat = (utime: number, stime: number, rss: number) => {
    const fields = Array.from({ length: 50 }, () => '0');
    fields[13] = String(utime);
    fields[14] = String(stime);
    fields[23] = String(rss);
    return `42 (a) b) ${fields.slice(2).join(' ')}\n`;
  };
  let clock = 1000;
  writeFileSync(join(root, '42', 'stat'), stat(0, 0, 10));
  const sampler = new UsageSampler({ intervalMs: 20, procRoot: root, pageSize: 4096, clockTicks: 100, now: () => clock });
  t.teardown(() => sampler.close());
  const samples: [number, number][] = [];
  sampler.watch(42, (cpu, rss) => { samples.push([cpu, rss]); });
  await waitFor(() => samples.length >= 1, { what: 'the first sample' });
  t.same(samples[0], [-1, 40960], 'first tick: CPU unknown, RSS in pages times the page size');
  // one JS turn: the file and the clock move together between two ticks
  const n = samples.length;
  writeFileSync(join(root, '42', 'stat'), stat(30, 20, 20));
  clock += 1000;
  await waitFor(() => samples.length > n, { what: 'the next sample' });
  t.same(samples[n], [50, 81920], '50 ticks of 1/100 s in 1 s = 50 % of one core');
  const m = samples.length;
  writeFileSync(join(root, '42', 'stat'), stat(230, 20, 20));
  clock += 1000;
  await waitFor(() => samples.length > m, { what: 'a busy sample' });
  t.same(samples[m], [200, 81920], 'two cores busy = 200 % (percent of one core)');
});
