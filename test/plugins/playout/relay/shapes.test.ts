import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Relay } from '../../../../plugins/playout/relay/index.ts';
import type { TestLike } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { capture, clipMatches, dtsSteps, freePort, log, probePackets, pushInto, tempDir } from './media.ts';

async function relayOn(t: TestLike, src: number): Promise<{ relay: Relay; port: number }> {
  const url = `tcp://127.0.0.1:${src}?listen=1`;
  const port = await freePort();
  const relay = new Relay({ id: `playout:${url}`, url, inputOptions: [], port, ffmpeg: plainFfmpeg, label: 'shape', log });
  t.teardown(() => relay.stop());
  await relay.start();
  return { relay, port };
}

t.test('a video-only source gets a video-only error frame, continuous across loss and return', async (t) => {
  const dir = tempDir(t);
  const src = await freePort();
  const { relay, port } = await relayOn(t, src);
  const running = () => relay.status().input.state === 'running';
  let pusher = await pushInto(t, src, running, { audio: false, rate: 10 });
  await waitFor(() => relay.status().input.packet > 20 && clipMatches(relay.status()), { timeout: 30_000, what: 'the source and its clip' });
  const out = capture(t, port);
  await waitFor(() => relay.status().gop !== '', { timeout: 30_000, what: 'a GOP' });
  await pusher.kill();
  await waitFor(() => relay.status().looping, { timeout: 30_000, what: 'error frame' });
  const dup = relay.status().dup;
  await waitFor(() => relay.status().dup > dup + 15, { timeout: 30_000, what: 'error frames' });
  pusher = await pushInto(t, src, running, { audio: false, rate: 10 });
  const at = relay.status().output.packet;
  await waitFor(() => relay.status().output.packet > at + 20, { timeout: 30_000, what: 'the source again' });
  out.close();
  writeFileSync(join(dir, 'out.ts'), out.bytes());
  const packets = probePackets(join(dir, 'out.ts'));
  t.equal(packets.filter((p) => p.type === 'audio').length, 0, 'no audio stream appears');
  const v = dtsSteps(packets, 'video');
  t.ok(v.count > 40 && v.minStep > 0 && v.maxGap < 0.25, `continuous at 10 fps (${v.count} frames, steps ${v.minStep}..${v.maxGap})`);
});

t.test('a source that stalls without closing is given up after about a second', async (t) => {
  const src = await freePort();
  const { relay } = await relayOn(t, src);
  const running = () => relay.status().input.state === 'running';
  const pusher = await pushInto(t, src, running);
  await waitFor(() => clipMatches(relay.status()), { timeout: 30_000, what: 'the clip' });
  const pid = relay.pids()[0];
  pusher.proc.kill('SIGSTOP'); // the connection stays open, nothing arrives
  t.teardown(() => { pusher.proc.kill('SIGCONT'); });
  await waitFor(() => relay.status().looping, { timeout: 30_000, what: 'error frame on a stall' });
  t.equal(relay.status().input.state, 'idle');
  await waitFor(() => relay.pids()[0] !== pid, { timeout: 30_000, what: 'the stalled source run replaced' });
});
