import t from 'tap';
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, command } from '../../core/process/helpers.ts';
import { active, summary } from './helpers.ts';

t.test('a process writing to a network sink is one ffmpeg session with its output bytes', async (t) => {
  // the sink: a UDP socket on a free port that takes what ffmpeg sends
  const sink = createSocket('udp4');
  let received = 0;
  sink.on('message', (m) => { received += m.length; });
  await new Promise<void>((r) => sink.bind(0, '127.0.0.1', r));
  t.teardown(() => sink.close());
  const port = (sink.address() as AddressInfo).port;

  const app = await startApp(t);
  await addProcess(app, {
    id: 'net', reference: 'cam1', autostart: true,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{ id: 'out', address: `udp://127.0.0.1:${port}`, options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-f', 'mpegts'] }],
  });
  const s = await waitFor(async () => (await active(app, 'ffmpeg')).find((x: any) => x.bytes_tx > 0), { timeout: 30_000, what: 'ffmpeg session with egress' });
  t.match(s, { id: 'net', reference: 'cam1', local: 'unknown', remote: 'unknown' });
  t.ok(received > 0, 'the sink got data');

  t.equal(await command(app, 'net', 'stop'), 200);
  await waitFor(async () => (await summary(app, 'ffmpeg')).summary.reference.cam1?.sessions === 1, { timeout: 30_000, what: 'closed into the history' });
  t.same(await active(app, 'ffmpeg'), []);
});
