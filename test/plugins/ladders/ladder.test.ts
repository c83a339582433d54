import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { ffmpegPids, state, waitState } from '../../core/process/helpers.ts';
import { aligned, probe, publish, record } from './helpers.ts';

/*
 * A 3-rung ladder on a stream published over RTMP, with real ffmpeg (issue 48 points 1 and 3):
 * the ladder's process waits; readers of the renditions start it (one ffmpeg for every rung); each
 * rung decodes at its size with keyframes at the same times in every rung; once the readers left
 * it stops after its idle time and waits again.
 */

const ID = 'ladder:live_cam';

t.test('readers of the renditions start one ffmpeg; every rung at its size, keyframes aligned; idle stop', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' }, ladders: { enable: true } } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  const base = `rtmp://127.0.0.1:${rtmp.ports().rtmp}`;
  const put = await app.request('PUT', '/api/v3/ladders/cam', {
    body: { stream: 'live/cam', idle_seconds: 3, rungs: ['360p', '240p', { name: 'small', height: 180, video_kbps: 150, audio_kbps: 48, fps: 10, profile: 'baseline' }] },
  });
  t.equal(put.status, 201, put.text);
  t.match(put.body.processes, [{ id: ID, stream: 'live/cam' }], 'its process is made at once');
  await waitState(app, ID, (s) => s.ondemand?.waiting === true, 'waiting');
  t.same(ffmpegPids('split=3'), [], 'no ffmpeg before a reader');

  publish(t, `${base}/live/cam`);
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.some?.((s: { name: string }) => s.name === '/live/cam'), { what: 'the source published' });

  const dir = await mkdtemp(join(tmpdir(), 'ladder-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const rungs = ['360p', '240p', 'small'];
  const files = rungs.map((r) => join(dir, `${r}.flv`));
  const reading = Promise.all(rungs.map((r, i) => record(`${base}/live/cam/${r}`, files[i]!, 9)));
  const s = await waitState(app, ID, (x) => x.exec === 'running', 'running');
  t.match(s.ondemand, { started_by: 'stream' }, 'started by a stream reader');
  await waitFor(() => ffmpegPids('split=3').length === 1, { what: 'the ladder ffmpeg' });
  t.equal(ffmpegPids('split=3').length, 1, 'one ffmpeg makes every rung');
  await reading;
  const left = performance.now();

  const facts = await Promise.all(files.map((f) => probe(f)));
  t.match(facts.map((f) => [f.width, f.height]), [[640, 360], [426, 240], [320, 180]], 'each rung at its size (aspect kept, even)');
  for (const f of facts) t.same(f.codecs.sort(), ['audio', 'video'], 'video and audio in every rung');
  for (const [i, f] of facts.entries()) {
    t.ok(f.keyframes.length >= 3, `${rungs[i]}: ${f.keyframes.length} keyframes`);
    const gaps = f.keyframes.slice(1).map((k, j) => k - f.keyframes[j]!);
    t.ok(gaps.every((g) => Math.abs(g - 2) < 0.05), `${rungs[i]}: a keyframe every 2 s (${gaps.map((g) => g.toFixed(3)).join(', ')})`);
  }
  // within one frame of the source (25 fps)
  t.ok(aligned(facts[0]!.keyframes, facts[1]!.keyframes, 0.04), `360p and 240p keyframes align (${facts[0]!.keyframes} / ${facts[1]!.keyframes})`);
  t.ok(aligned(facts[0]!.keyframes, facts[2]!.keyframes, 0.04), `360p and small keyframes align (${facts[2]!.keyframes})`);

  // the readers left: 3 s idle, then it stops and waits again
  const back = await waitState(app, ID, (x) => x.ondemand?.waiting === true && x.exec === 'finished', 'waiting again', 25_000);
  const idleMs = performance.now() - left;
  t.ok(idleMs >= 1500 && idleMs < 15_000, `stopped ${Math.round(idleMs)} ms after the readers left (idle 3 s)`);
  t.equal(back.order, 'start', 'the order stays start');
  await waitFor(() => ffmpegPids('split=3').length === 0, { what: 'the ladder ffmpeg gone' });
  const st = await state(app, ID);
  t.equal(st.exec, 'finished');
});
