import { childPids } from '../../../helpers/net-proc.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A light real-time video source. */
export const LAVFI_IN = { id: 'in', address: 'testsrc2=size=160x120:rate=25', options: ['-re', '-f', 'lavfi'] };

/** An on-demand process writing HLS to memfs as `<name>.m3u8` and `<name>_%d.ts`. */
export function hlsProcess(id: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    input: [LAVFI_IN],
    output: [{
      id: 'out',
      address: `{memfs}/${name}.m3u8`,
      options: [
        '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-f', 'hls', '-hls_time', '1',
        '-hls_list_size', '4', '-hls_flags', 'delete_segments', '-method', 'PUT', '-hls_segment_filename', `{memfs}/${name}_%d.ts`,
      ],
    }],
    autostart: true,
    ondemand: { enable: true, idle_seconds: 3 },
    ...extra,
  };
}

/** An on-demand process publishing FLV to the RTMP server's stream `name`. */
export function rtmpProcess(id: string, name: string): Record<string, unknown> {
  return {
    id,
    input: [LAVFI_IN],
    output: [{ id: 'out', address: `{rtmp,name=${name}}`, options: ['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-f', 'flv'] }],
    autostart: true,
    ondemand: { enable: true, idle_seconds: 3 },
  };
}

/** ffprobe's streams of `url` (codec types), within `timeoutMs`. */
export async function probeStreams(url: string, timeoutMs = 20_000): Promise<string[]> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-rw_timeout', String(timeoutMs * 1000), '-show_entries', 'stream=codec_type', '-of', 'csv=p=0', url], { timeout: timeoutMs + 5000 });
  return stdout.split('\n').map((s) => s.trim()).filter(Boolean);
}

/** Frames ffmpeg decodes from `url` within `frames` (it reads that many, then stops). */
export async function readFrames(url: string, frames: number, timeoutMs = 25_000): Promise<number> {
  const { stderr } = await run('ffmpeg', ['-hide_banner', '-nostats', '-loglevel', 'info', '-rw_timeout', String(timeoutMs * 1000), '-i', url,
    '-frames:v', String(frames), '-f', 'null', '-'], { timeout: timeoutMs + 5000 });
  const m = [...stderr.matchAll(/frame=\s*(\d+)/g)].pop();
  return m ? Number(m[1]) : 0;
}

/**
 * Pids of ffmpeg children of this test process (the in-process service's, by parent pid: other
 * tests on the machine run their own) whose command line contains `marker`.
 */
export function ownFfmpegs(marker: string, parent = process.pid): number[] {
  return childPids((cmd) => (cmd.startsWith('ffmpeg') || cmd.includes('/ffmpeg\0')) && cmd.includes(marker), parent);
}
