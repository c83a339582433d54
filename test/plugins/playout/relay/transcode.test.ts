import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';
import t from 'tap';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Relay } from '../../../../plugins/playout/relay/index.ts';
import { waitFor } from '../../../helpers/wait.ts';
import { dtsSteps, freePort, log, probePackets, pushInto, tempDir } from './media.ts';

t.test('a transcoding process writing HLS keeps running across loss and return, timestamps continuous', async (t) => {
  const dir = tempDir(t);
  const src = await freePort();
  const port = await freePort();
  const url = `tcp://127.0.0.1:${src}?listen=1`;
  const relay = new Relay({ id: `playout:${url}`, url, inputOptions: [], port, ffmpeg: plainFfmpeg, label: 'hls', log });
  t.teardown(() => relay.stop());
  await relay.start();
  const proc = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'warning', '-f', 'mpegts', '-i', `tcp://127.0.0.1:${port}`,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-c:a', 'aac', '-b:a', '64k',
    '-f', 'hls', '-hls_time', '1', '-hls_list_size', '0', '-hls_segment_filename', join(dir, 's%03d.ts'), join(dir, 'out.m3u8')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((r) => proc.once('close', () => r()));
  t.teardown(async () => { if (proc.exitCode === null) { proc.kill('SIGKILL'); await exited; } });
  const segments = () => readdirSync(dir).filter((f) => /^s\d+\.ts$/.test(f)).length;
  const running = () => relay.status().input.state === 'running';

  let pusher = await pushInto(t, src, running);
  await waitFor(() => segments() >= 3, { timeout: 30_000, what: 'HLS segments from the source' });
  await pusher.kill();
  await waitFor(() => relay.status().looping, { timeout: 30_000, what: 'error frame' });
  const during = segments();
  await waitFor(() => segments() >= during + 3, { timeout: 30_000, what: 'segments while the source is gone' });
  pusher = await pushInto(t, src, running);
  const after = segments();
  await waitFor(() => segments() >= after + 3, { timeout: 30_000, what: 'segments from the source again' });
  t.equal(proc.exitCode, null, 'the process never stopped');
  proc.kill('SIGINT');
  await exited;
  const all = readdirSync(dir).filter((f) => /^s\d+\.ts$/.test(f)).sort().map((f) => readFileSync(join(dir, f)));
  writeFileSync(join(dir, 'all.ts'), Buffer.concat(all));
  const packets = probePackets(join(dir, 'all.ts'));
  const v = dtsSteps(packets, 'video');
  const a = dtsSteps(packets, 'audio');
  t.ok(v.minStep > 0 && v.maxGap < 0.1, `video continuous (steps ${v.minStep}..${v.maxGap})`);
  // the audio lost with the source is its last audio PES (ffmpeg groups up to ~0.4 s at 64 kbit/s): a hole, never a step back
  t.ok(a.minStep > 0 && a.maxGap < 0.75, `audio continuous (steps ${a.minStep}..${a.maxGap})`);
  t.notMatch(stderr, /non monoton/i, 'ffmpeg saw no backwards timestamps');
});
