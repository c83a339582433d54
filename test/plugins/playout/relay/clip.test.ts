import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clipFrames, encodeClip, imageExtension, imageProblem } from '../../../../plugins/playout/relay/clip.ts';
import { ClipLoop } from '../../../../plugins/playout/relay/clip-loop.ts';
import type { StreamParams } from '../../../../plugins/playout/relay/stream-params.ts';
import { stillImage, tempDir } from './media.ts';

function streams(file: string): string[] {
  const r = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height,pix_fmt,sample_rate,channels,r_frame_rate',
    '-of', 'csv=p=0', file], { encoding: 'utf8' });
  return [...new Set(r.stdout.split('\n').filter(Boolean))];
}

t.test('the clip length holds whole audio frames when it can', async (t) => {
  const v = { codec: 'h264', width: 320, height: 240, fps: 25, pixFmt: 'yuv420p', profile: '' };
  t.equal(clipFrames({ video: v, audio: { codec: 'aac', rate: 48000, layout: 'stereo' } }), 32, '1.28 s = 60 AAC frames');
  t.equal(clipFrames({ video: { ...v, fps: 30 }, audio: { codec: 'aac', rate: 48000, layout: 'stereo' } }), 32);
  t.equal(clipFrames({ video: v }), 25, 'one second without audio');
});

t.test('the clip matches the source parameters', async (t) => {
  const dir = tempDir(t);
  const cases: [StreamParams, string[]][] = [
    [{ video: { codec: 'h264', width: 320, height: 240, fps: 25, pixFmt: 'yuv420p', profile: 'High' }, audio: { codec: 'aac', rate: 44100, layout: 'mono' } },
      ['h264,320,240,yuv420p,25/1', 'aac,44100,1,0/0']],
    [{ video: { codec: 'hevc', width: 160, height: 120, fps: 10, pixFmt: 'yuv420p', profile: 'Main' } }, ['hevc,160,120,yuv420p,10/1']],
    [{ audio: { codec: 'mp2', rate: 48000, layout: 'stereo' } }, ['mp2,48000,2,0/0']],
  ];
  for (const [params, want] of cases) {
    const ts = await encodeClip({ ffmpeg: plainFfmpeg, params, label: 'p1', text: true });
    const file = join(dir, 'clip.ts');
    writeFileSync(file, ts);
    t.same(streams(file).map((l) => l.replace(/,+/g, ',')), want, JSON.stringify(params));
    const loop = new ClipLoop(ts);
    t.ok(loop.ready, 'the clip has its tables');
    const fps = params.video?.fps;
    if (fps) t.equal(loop.frames, clipFrames(params), 'one pass holds the planned frames');
    if (fps) t.ok(Math.abs(loop.duration - loop.frames / fps) < 1e-6, 'one pass lasts frames / fps');
  }
});

t.test('images: known formats decode, anything else is refused', async (t) => {
  const png = stillImage('blue');
  const jpg = stillImage('blue', 'mjpeg');
  t.equal(imageExtension(png), 'png');
  t.equal(imageExtension(jpg), 'jpg');
  t.equal(imageExtension(Buffer.from('hello world')), undefined);
  t.equal(await imageProblem(plainFfmpeg, png), undefined);
  t.equal(await imageProblem(plainFfmpeg, jpg), undefined);
  t.equal(await imageProblem(plainFfmpeg, Buffer.concat([png.subarray(0, 40), Buffer.alloc(40)])), 'the image cannot be decoded', 'a truncated png');
});
