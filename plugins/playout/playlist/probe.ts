import type { Ffmpeg } from '../relay/ffmpeg.ts';
import type { ItemMedia } from './schema.ts';

/** An item's probe is given up after this long (a URL that never answers). */
export const PROBE_TIMEOUT_MS = 10_000;

interface ProbeJson {
  streams?: { codec_type?: string; codec_name?: string; width?: number; height?: number; avg_frame_rate?: string; r_frame_rate?: string }[];
  format?: { duration?: string };
}

function rate(r: string | undefined): number {
  const [n, d] = (r ?? '0/1').split('/').map(Number);
  return d ? Math.round((n! / d) * 1000) / 1000 : 0;
}

/** ffprobe next to the configured ffmpeg (`/usr/bin/ffmpeg` -> `/usr/bin/ffprobe`). */
export function ffprobeOf(ffmpeg: string): string {
  return ffmpeg.replace(/ffmpeg([^/]*)$/, 'ffprobe$1');
}

/**
 * Probes one source within PROBE_TIMEOUT_MS, confined like every child (`ff.spawn` is the core's
 * `childrenRef`); `inputOptions` go before the source (a local file's protocol whitelist). The
 * reason when it cannot be read.
 */
export function probeItem(ff: Ffmpeg, source: string, inputOptions: readonly string[] = []): Promise<ItemMedia | string> {
  return new Promise((resolve) => {
    const child = ff.spawn(ffprobeOf(ff.binary), ['-v', 'error', ...inputOptions, '-show_entries',
      'stream=codec_type,codec_name,width,height,avg_frame_rate,r_frame_rate:format=duration', '-of', 'json', source],
    { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-2000); });
    child.on('error', (e) => { err = e.message; });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal) return resolve(`no answer within ${PROBE_TIMEOUT_MS / 1000} s`);
      if (code !== 0) return resolve(err.trim().split('\n').at(-1) || `ffprobe exited with ${code}`);
      try {
        const j = JSON.parse(out) as ProbeJson;
        const v = j.streams?.find((s) => s.codec_type === 'video');
        const a = j.streams?.find((s) => s.codec_type === 'audio');
        if (!v) return resolve('no video stream');
        resolve({
          video: v.codec_name ?? '', width: v.width ?? 0, height: v.height ?? 0, fps: rate(v.avg_frame_rate ?? v.r_frame_rate),
          audio: a?.codec_name ?? '', duration: Number(j.format?.duration ?? 0) || 0,
        });
      } catch {
        resolve('ffprobe answered something else than JSON');
      }
    });
  });
}

/** Why `b` cannot be copied after `a` (codec, size, frame rate, audio), or null. */
export function mediaMismatch(a: ItemMedia, b: ItemMedia): string | null {
  if (a.video !== b.video) return `video codec ${b.video} != ${a.video}`;
  if (a.width !== b.width || a.height !== b.height) return `video size ${b.width}x${b.height} != ${a.width}x${a.height}`;
  if (Math.abs(a.fps - b.fps) > 0.01) return `frame rate ${b.fps} != ${a.fps}`;
  if (a.audio !== b.audio) return `audio codec ${b.audio || 'none'} != ${a.audio || 'none'}`;
  return null;
}
