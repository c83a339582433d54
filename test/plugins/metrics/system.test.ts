import t from 'tap';
import { connect, createServer } from 'node:net';
import { SystemCollector } from '../../../plugins/metrics/collectors/system.ts';
import type { MetricValue } from '../../../plugins/metrics/api.ts';
import { waitFor } from '../../helpers/wait.ts';

const value = (vals: readonly MetricValue[], name: string, labels: Record<string, string> = {}) =>
  vals.find((v) => v.name === name && Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value;

/** Sends `bytes` over loopback and waits until they arrived. */
async function loopback(bytes: number): Promise<void> {
  let got = 0;
  const server = createServer((s) => s.on('data', (d: Buffer) => { got += d.length; }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const c = connect(port, '127.0.0.1');
  c.end(Buffer.alloc(bytes));
  await waitFor(() => got >= bytes, { what: 'the bytes over loopback' });
  server.close();
}

// issue 46.2: the files a sample reads stay open and are read again from their start; each read is the kernel's text of now
t.test('the system collector reads its kept /proc files afresh at every sample', async (t) => {
  const c = new SystemCollector(t.testdir());
  t.teardown(() => c.close());
  const first = c.collect();
  t.ok(Number(value(first, 'mem_total')) > 0, 'mem_total');
  t.ok(Number(value(first, 'mem_free')) > 0, 'mem_free');
  const rx0 = value(first, 'net_rx', { interface: 'lo' });
  t.type(rx0, 'number', 'net_rx of lo');
  await loopback(4 * 1024 * 1024);
  const second = c.collect();
  t.ok(Number(value(second, 'net_rx', { interface: 'lo' })) >= Number(rx0) + 4 * 1024 * 1024, 'the second read saw the loopback traffic');
  const cpu = ['cpu_user', 'cpu_system', 'cpu_idle', 'cpu_other'].map((n) => Number(value(second, n)));
  t.ok(Math.abs(cpu.reduce((a, b) => a + b, 0) - 100) < 0.5, 'the CPU shares add up to 100 %');
  c.close();
  await loopback(1024 * 1024);
  t.ok(Number(value(c.collect(), 'net_rx', { interface: 'lo' })) >= Number(rx0) + 5 * 1024 * 1024, 'closed, it opens them again');
});
