import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Relay } from '../../../../plugins/playout/relay/index.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { alive, capture, clipMatches, dtsSteps, freePort, log, probePackets, pushInto, tempDir } from './media.ts';

t.test('the consumer sees one continuous stream across source loss and return', async (t) => {
  const dir = tempDir(t);
  const src = await freePort();
  const port = await freePort();
  const relay = new Relay({
    id: `playout:tcp://127.0.0.1:${src}?listen=1`, url: `tcp://127.0.0.1:${src}?listen=1`, inputOptions: [],
    port, ffmpeg: plainFfmpeg, label: 'relaytest', log,
  });
  t.teardown(() => relay.stop());
  await relay.start();
  const out = capture(t, port);
  const running = () => relay.status().input.state === 'running';

  let pusher = await pushInto(t, src, running);
  await waitFor(() => relay.status().output.packet > 75 && relay.status().input.packet > 75, { timeout: 30_000, what: 'pass-through output' });
  const s1 = relay.status();
  t.equal(s1.looping, false);
  t.equal(s1.output.state, 'running', 'a consumer is connected');
  t.ok(s1.input.packet > 75 && s1.input.size_kb > 0, 'the source figures move');
  t.equal(s1.gop, '25', 'GOP of the source');

  await waitFor(() => clipMatches(relay.status()), { timeout: 30_000, what: 'the error frame encoded for the source parameters' });
  await pusher.kill();
  await waitFor(() => relay.status().looping, { timeout: 30_000, what: 'error frame after the source ended' });
  const dupAt = relay.status().dup;
  await waitFor(() => relay.status().dup > dupAt + 50, { timeout: 30_000, what: 'error frames sent' });
  t.equal(relay.status().input.state, 'idle');

  pusher = await pushInto(t, src, running);
  const back = relay.status().output.packet;
  await waitFor(() => !relay.status().looping && relay.status().output.packet > back + 75, { timeout: 30_000, what: 'the source back' });
  const pids = relay.pids();
  t.ok(pids.length === 1 && alive(pids[0]!), 'one source child');
  out.close();
  await relay.stop();
  t.ok(pids.every((p) => !alive(p)), 'stop leaves no child');
  await relay.stop(); // idempotent

  const file = join(dir, 'out.ts');
  writeFileSync(file, out.bytes());
  const packets = probePackets(file);
  const v = dtsSteps(packets, 'video');
  const a = dtsSteps(packets, 'audio');
  t.ok(v.count > 200, `video packets (${v.count})`);
  t.ok(v.minStep > 0, `video DTS strictly increasing (smallest step ${v.minStep})`);
  t.ok(v.maxGap < 0.1, `no video gap over 2.5 frames (largest ${v.maxGap})`);
  t.ok(a.minStep > 0, `audio DTS strictly increasing (smallest step ${a.minStep})`);
  // the audio lost with the source is its last audio PES (ffmpeg groups up to ~0.4 s at 64 kbit/s)
  t.ok(a.maxGap < 0.75, `no audio gap over 0.75 s (largest ${a.maxGap})`);
  t.ok(packets[0]!.key, 'the consumer starts at a keyframe');
});
