import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { state } from '../../core/process/helpers.ts';
import { probe, publish, record } from './helpers.ts';

/*
 * A ladder with an audio-only rung on a camera without audio, with real ffmpeg (issue 48): the
 * rung is left out once the source is seen, so the ladder runs (before, ffmpeg refused the whole
 * command: no audio stream to map); the multivariant playlist lists the video rendition only and
 * that rendition decodes at its size. The run starts within the request's wait, longer than the
 * ladder's idle time (3 s): the playlist request waiting for the first publish holds the run
 * (before, it was stopped as idle; ffmpeg then waited its 5 s probe time for audio that never
 * came, now half a second).
 */

const LLHLS = { enable: true, target_duration_seconds: 1, part_target_ms: 200, idle_seconds: 30 };
const ID = 'ladder:live_cam';

t.test('a camera without audio: the audio rung is left out and the ladder plays', async (t) => {
  const app = await startApp(t, { config: { rtmp: { enable: true, address: '127.0.0.1:0' }, ladders: { enable: true }, llhls: LLHLS } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  const base = `rtmp://127.0.0.1:${rtmp.ports().rtmp}`;
  const put = await app.request('PUT', '/api/v3/ladders/cam', { body: { stream: 'live/cam', idle_seconds: 3, rungs: ['240p', 'audio'] } });
  t.equal(put.status, 201, put.text);

  publish(t, `${base}/live/cam`, { audio: false });
  const outputs = async () => ((await app.request('GET', `/api/v3/process/${ID}/config`)).body.output as Array<{ id: string }>).map((o) => o.id).join();
  await waitFor(async () => (await outputs()) === '240p' || undefined, { what: 'the ladder fitted to the camera', timeout: 30_000 });

  const asked = performance.now();
  const master = await app.request('GET', '/hls/live/cam/master.m3u8');
  t.comment(`master.m3u8 answered ${Math.round(performance.now() - asked)} ms after the request that started the ladder`);
  t.equal(master.status, 200, master.text);
  const inf = master.text.split('\n').filter((l) => l.startsWith('#EXT-X-STREAM-INF:'));
  t.equal(inf.length, 1, `one variant: the video rung (${master.text})`);
  t.match(inf[0], /CODECS="avc1\.[0-9a-f]{6}",RESOLUTION=426x240/, 'video only, at the rung\'s size');
  t.notMatch(master.text, /audio\/index\.m3u8/, 'no audio rendition listed');
  t.equal((await state(app, ID)).exec, 'running', 'the ladder runs');

  const dir = await mkdtemp(join(tmpdir(), 'ladder-media-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, '240p.flv');
  await record(`${base}/live/cam/240p`, file, 6);
  const facts = await probe(file);
  t.same([facts.width, facts.height, facts.codecs], [426, 240, ['video']], 'the rendition decodes: video at its size');
});
