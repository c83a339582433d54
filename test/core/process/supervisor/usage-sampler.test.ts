import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
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
  await waitFor(() => seen.busy.cpu > 50, { what: 'busy child above 50 % of a core', timeout: 10_000 });
  t.ok(seen.busy.rss > 10e6, `busy child RSS ${seen.busy.rss} is plausible for node`);
  await waitFor(() => seen.idle.cpu >= 0 && seen.idle.cpu < 20 && seen.idle.rss > 10e6, { what: 'idle child measured', timeout: 10_000 });
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
