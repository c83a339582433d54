import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestLike } from '../../helpers/app.ts';

const run = promisify(execFile);

/**
 * A real-time RTMP publisher: ffmpeg's test picture (640x360, 25 fps, a 2 s GOP) with a sine tone (unless `audio: false`),
 * x264 ultrafast, light enough for a busy 2-core box. Stopped at teardown (and by `stop`).
 */
export function publish(t: TestLike, url: string, media: { audio?: boolean } = {}): { child: ChildProcess; stop(): Promise<void> } {
  const audio = media.audio === false ? [] : ['-re', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100', '-c:a', 'aac', '-b:a', '64k'];
  const child = spawn('ffmpeg', ['-hide_banner', '-nostats', '-loglevel', 'error', '-re',
    '-f', 'lavfi', '-i', 'testsrc2=size=640x360:rate=25', ...audio,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '50', '-pix_fmt', 'yuv420p', '-f', 'flv', url], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
  };
  t.teardown(stop);
  return { child, stop };
}

/** Copies `seconds` of `url` into an FLV file, keeping the stream's own timestamps (`-copyts`). */
export async function record(url: string, file: string, seconds: number): Promise<void> {
  await run('ffmpeg', ['-hide_banner', '-nostats', '-loglevel', 'error', '-y', '-rw_timeout', '20000000', '-copyts', '-i', url,
    '-t', String(seconds), '-c', 'copy', '-f', 'flv', file], { timeout: (seconds + 40) * 1000 });
}

export interface VideoFacts { width: number; height: number; keyframes: number[]; codecs: string[] }

/** The video size, the keyframes' times (s) and the codec types of a file, by ffprobe. */
export async function probe(file: string): Promise<VideoFacts> {
  const frames = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-skip_frame', 'nokey', '-show_entries', 'frame=pts_time,width,height',
    '-of', 'csv=p=0', file]);
  const rows = frames.stdout.split('\n').map((l) => l.trim().split(',')).filter((r) => r.length >= 3 && r[0] !== '');
  const streams = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', file]);
  return {
    width: Number(rows[0]?.[1] ?? 0),
    height: Number(rows[0]?.[2] ?? 0),
    keyframes: rows.map((r) => Number(r[0])),
    codecs: streams.stdout.split('\n').map((s) => s.trim()).filter(Boolean),
  };
}

/** Whether every keyframe of `a` in the span both cover has one of `b` within `tolerance` seconds. */
export function aligned(a: readonly number[], b: readonly number[], tolerance: number): boolean {
  const from = Math.max(a[0] ?? 0, b[0] ?? 0);
  const to = Math.min(a.at(-1) ?? 0, b.at(-1) ?? 0);
  const inner = a.filter((x) => x >= from && x <= to);
  return inner.length > 0 && inner.every((x) => b.some((y) => Math.abs(x - y) <= tolerance));
}
