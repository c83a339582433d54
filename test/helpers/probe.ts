import { spawn, type ChildProcess } from 'node:child_process';
import type { TestLike } from './app.ts';

/*
 * The track order a reader of a live URL sees: ffprobe's streams, by index (`video`, `audio`).
 * Demuxers number the tracks in the order the stream announces them (an FLV stream: the order of
 * the first tags of each kind; MPEG-TS: the PMT), which is what `-map 0:0` / `-map 0:1` pick.
 */

/** One ffprobe of `url`: its streams' codec types by index ([] when it could not read it). Killed at teardown. */
export function probeTracks(t: TestLike, url: string, timeoutMs = 30_000): Promise<string[]> {
  const child: ChildProcess = spawn('ffprobe', ['-v', 'error', '-analyzeduration', '3000000', '-show_entries', 'stream=index,codec_type', '-of', 'csv=p=0', url],
    { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<string[]>((resolve) => child.on('close', () => {
    clearTimeout(timer);
    // MPEG-TS lists each stream twice (in its program, and on its own): one entry per index
    const byIndex = new Map<number, string>();
    for (const r of out.split('\n').map((l) => l.trim().split(','))) if (r.length === 2) byIndex.set(Number(r[0]), r[1]!);
    resolve([...byIndex].sort((a, b) => a[0] - b[0]).map((r) => r[1]));
  }));
  t.teardown(() => { clearTimeout(timer); child.kill('SIGKILL'); return done; });
  return done;
}

/**
 * A reader there from the start: ffprobe tried again and again (the name is refused until its
 * publisher is in) until it reads the stream, within `deadlineMs`.
 */
export async function probeTracksFirst(t: TestLike, url: string, deadlineMs = 30_000): Promise<string[]> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const tracks = await probeTracks(t, url, Math.max(1000, end - Date.now()));
    if (tracks.length > 0 || Date.now() > end) return tracks;
    await new Promise((r) => setTimeout(r, 50));
  }
}
