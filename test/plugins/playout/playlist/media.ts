import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FFMPEG, run } from '../helpers.ts';

/** A small H.264/AAC file made with lavfi: `seconds` long, one keyframe a second, 25 fps. */
export async function makeClip(dir: string, name: string, seconds: number, size = '320x240', audio = true): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, name);
  const a = audio ? ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`] : [];
  const r = await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25:duration=${seconds}`, ...a,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p',
    ...(audio ? ['-c:a', 'aac', '-b:a', '64k'] : []), '-shortest', file]);
  if (r.code !== 0) throw new Error(`ffmpeg could not make ${name}: ${r.stderr}`);
  return file;
}
