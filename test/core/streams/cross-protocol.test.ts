import t from 'tap';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitFor } from '../../helpers/wait.ts';
import type { TestLike } from '../../helpers/app.ts';
import { rtmpServiceRef, type RtmpService } from '../../../plugins/rtmp/ref.ts';
import { publish, ffmpeg as rtmpFfmpeg } from '../../plugins/rtmp/helpers.ts';
import { ffmpeg, srtUrl, startSrtApp, SOURCE } from '../../plugins/srt/srt-helpers.ts';

/*
 * One stream, two protocols, real ffmpeg on both ends: published over RTMP and read over SRT, and
 * the reverse, through the service's stream table and its remux (no ffmpeg in the service).
 */

async function startBoth(t: TestLike) {
  const app = await startSrtApp(t, { token: '', passphrase: '' }, { rtmp: { enable: true, address: '127.0.0.1:0' } });
  const rtmp = app.service.app.kernel.services.resolve(rtmpServiceRef) as RtmpService;
  return Object.assign(app, { rtmpBase: `rtmp://127.0.0.1:${rtmp.ports().rtmp}` });
}

/** Video frames in a framemd5 file (stream 0). */
async function videoFrames(file: string): Promise<number> {
  return (await readFile(file, 'utf8')).split('\n').filter((l) => /^0,/.test(l)).length;
}

t.test('published over RTMP, read over SRT: frames decode', async (t) => {
  const app = await startBoth(t);
  publish(t, `${app.rtmpBase}/live/cross.stream`, { seconds: 60 });
  await waitFor(async () => (await app.request('GET', '/api/v3/rtmp')).body.length === 1, { timeout: 30_000, what: 'the RTMP publisher listed' });
  const out = join(app.dir, 'srt-read.txt');
  const play = ffmpeg(t, ['-i', srtUrl(app.srtPort, 'live/cross.stream', ''), '-frames:v', '10', '-f', 'framemd5', out]);
  await play.done;
  t.equal(play.code, 0, `the SRT reader decoded (${play.stderr})`);
  t.equal(await videoFrames(out), 10, 'ten decoded video frames');
  t.notMatch(play.stderr, /non-existing PPS|no frame/, 'it started at a keyframe');
  const listed = (await app.request('GET', '/api/v3/srt')).body;
  t.same(listed.publisher, {}, 'the SRT listing shows no SRT publisher for it');
});

t.test('published over SRT, played over RTMP: frames decode', async (t) => {
  const app = await startBoth(t);
  ffmpeg(t, ['-re', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10', '-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k',
    '-f', 'mpegts', srtUrl(app.srtPort, 'live/back,mode:publish', '')]);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body?.publisher?.['live/back'] !== undefined, { timeout: 30_000, what: 'the SRT publisher listed' });
  const out = join(app.dir, 'rtmp-read.txt');
  const play = rtmpFfmpeg(t, ['-loglevel', 'warning', '-i', `${app.rtmpBase}/live/back`, '-frames:v', '10', '-f', 'framemd5', out]);
  t.equal(await play.done, 0, `the RTMP player decoded (${play.stderr()})`);
  t.equal(await videoFrames(out), 10, 'ten decoded video frames');
  t.notMatch(play.stderr(), /non-existing PPS|no frame/, 'it started at a keyframe');
});

t.test('one name on every protocol: an SRT publisher makes an RTMP publish of that name busy', async (t) => {
  const app = await startBoth(t);
  ffmpeg(t, [...SOURCE, '-f', 'mpegts', srtUrl(app.srtPort, 'live/one,mode:publish', '')]);
  await waitFor(async () => (await app.request('GET', '/api/v3/srt')).body?.publisher?.['live/one'] !== undefined, { timeout: 30_000, what: 'the SRT publisher listed' });
  const second = publish(t, `${app.rtmpBase}/live/one`, { seconds: 5 });
  t.not(await second.done, 0, 'an RTMP publisher of the same name is refused');
  t.same((await app.request('GET', '/api/v3/rtmp')).body, [], 'and not listed');
});
