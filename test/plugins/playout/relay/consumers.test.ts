import t from 'tap';
import { connect } from 'node:net';
import { Consumers, HIGH_WATER } from '../../../../plugins/playout/relay/consumers.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { freePort, log } from './media.ts';

function packet(pid: number, key = false): Buffer {
  const p = Buffer.alloc(188, 0xff);
  p.set([0x47, 0x40 | (pid >> 8), pid & 0xff, 0x10]);
  if (key) p[3] = 0x30;
  return p;
}

t.test('a consumer starts at a keyframe with the tables in front', async (t) => {
  const port = await freePort();
  const tables = [packet(0), packet(0x1000)];
  const c = new Consumers(port, log, () => tables);
  await c.listen();
  t.teardown(() => c.close());
  const got: Buffer[] = [];
  const s = connect(port, '127.0.0.1');
  s.on('data', (d: Buffer) => got.push(d));
  t.teardown(() => s.destroy());
  await waitFor(() => c.count === 1, { what: 'connected' });
  c.packet(packet(0x100), false);
  c.packet(packet(0x101), false);
  c.packet(packet(0x100, true), true);
  c.packet(packet(0x101), false);
  c.flush();
  await waitFor(() => Buffer.concat(got).length === 4 * 188, { what: 'bytes' });
  const pids = [0, 1, 2, 3].map((i) => Buffer.concat(got).readUInt16BE(i * 188 + 1) & 0x1fff);
  t.same(pids, [0, 0x1000, 0x100, 0x101], 'PAT, PMT, keyframe, then on; nothing before the keyframe');
});

t.test('a consumer that does not read loses packets up to a keyframe, its buffer stays bounded', async (t) => {
  const port = await freePort();
  const c = new Consumers(port, log, () => []);
  await c.listen();
  t.teardown(() => c.close());
  const s = connect(port, '127.0.0.1');
  s.pause(); // never reads: the kernel buffers fill, then ours
  t.teardown(() => s.destroy());
  await waitFor(() => c.count === 1, { what: 'connected' });
  const chunk = 1000; // packets per flush
  for (let i = 0; i < 200 && c.drop === 0; i++) {
    for (let j = 0; j < chunk; j++) c.packet(packet(0x100, j === 0), j === 0);
    c.flush();
    await new Promise((r) => setImmediate(r));
  }
  t.ok(c.drop > 0, `packets dropped (${c.drop})`);
  t.ok(c.queue() * 188 <= HIGH_WATER + chunk * 188, `queue bounded (${c.queue()} packets)`);
});
