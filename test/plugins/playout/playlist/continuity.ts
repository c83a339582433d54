import { FFPROBE, run } from '../helpers.ts';

/** Decode timestamps (seconds) of one stream type in an MPEG-TS byte string, in file order. */
export async function dts(ts: Buffer, stream: 'v' | 'a'): Promise<number[]> {
  const r = await run(FFPROBE, ['-v', 'error', '-select_streams', `${stream}:0`, '-show_entries', 'packet=dts_time',
    '-of', 'csv=p=0', '-f', 'mpegts', '-i', 'pipe:0'], ts);
  if (r.code !== 0) throw new Error(`ffprobe: ${r.stderr}`);
  return r.stdout.toString().split('\n').map((l) => Number(l.trim().replace(/,$/, ''))).filter((n) => l0(n));
}
/** One AAC frame at 48 kHz, in seconds. */
export const AUDIO_FRAME = 1024 / 48_000;

const l0 = (n: number) => Number.isFinite(n) && n > 0;

/** The largest step between successive timestamps, and whether any goes back. */
export function steps(times: number[]): { max: number; back: number } {
  let max = 0;
  let back = 0;
  for (let i = 1; i < times.length; i++) {
    const d = times[i]! - times[i - 1]!;
    if (d < 0) back++;
    max = Math.max(max, d);
  }
  return { max, back };
}
