import t from 'tap';
import { spawnSync } from 'node:child_process';
import { imageProblem } from '../../../../plugins/playout/relay/clip.ts';
import { imageSize, imageSizeProblem, MAX_FRAME_PIXELS } from '../../../../plugins/playout/relay/image-size.ts';
import type { Ffmpeg } from '../../../../plugins/playout/relay/ffmpeg.ts';
import { plainFfmpeg } from '../../../helpers/plain-ffmpeg.ts';

/** An image of `w`x`h` written by real ffmpeg in `codec`. */
function image(w: number, h: number, codec: string, extra: string[] = []): Buffer {
  return spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `testsrc=s=${w}x${h}`, '-frames:v', '1', ...extra,
    '-c:v', codec, '-f', 'image2pipe', 'pipe:1']).stdout;
}

t.test('the sides of every format ffmpeg writes, from the header', async (t) => {
  const cases: [string, string[]][] = [['png', []], ['mjpeg', []], ['bmp', []], ['gif', []], ['libwebp', []], ['libwebp', ['-lossless', '1']],
    ['mjpeg', ['-pix_fmt', 'yuvj444p']]];
  for (const [codec, extra] of cases) {
    for (const [w, h] of [[64, 48], [321, 17], [1920, 1080]] as const) {
      const b = image(w, h, codec, extra);
      t.ok(b.length > 0, `${codec} written`);
      t.same(imageSize(b), { width: w, height: h }, `${codec} ${extra.join(' ')} ${w}x${h}`);
    }
  }
  const bottomUp = image(40, 30, 'bmp');
  bottomUp.writeInt32LE(-30, 22);
  t.same(imageSize(bottomUp), { width: 40, height: 30 }, 'a top-down BMP');
  t.equal(imageSize(Buffer.from('hello world, no image')), undefined);
  t.equal(imageSize(image(64, 48, 'png').subarray(0, 20)), undefined, 'a PNG cut before its IHDR');
});

t.test('an image of more pixels than a 4K frame is refused from its header, before ffmpeg runs', async (t) => {
  let spawned = 0;
  const counting: Ffmpeg = { ...plainFfmpeg, spawn: (...a: Parameters<Ffmpeg['spawn']>) => { spawned++; return plainFfmpeg.spawn(...a); } };
  const png = image(64, 48, 'png');
  png.writeUInt32BE(16000, 16);
  png.writeUInt32BE(16000, 20);
  t.match(await imageProblem(counting, png), /16000x16000: at most 8294400 pixels/);
  const jpg = image(64, 48, 'mjpeg');
  const sof = jpg.indexOf(Buffer.from([0xff, 0xc0]));
  jpg.writeUInt16BE(9000, sof + 5);
  t.match(imageSizeProblem(jpg), /x9000/, 'a JPEG side past 8192');
  t.match(await imageProblem(counting, Buffer.from('GIF89a\u0000\u0000\u0000\u0000', 'latin1')), /no pixels/);
  t.equal(spawned, 0, 'no encoder ran');
  t.equal(await imageProblem(counting, image(3840, 2160, 'mjpeg')), undefined, 'a 4K frame is fine');
  t.equal(MAX_FRAME_PIXELS, 3840 * 2160);
  t.equal(spawned, 1, 'that one was decoded');
});
