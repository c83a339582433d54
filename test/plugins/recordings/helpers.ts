import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FilesystemService } from '../../../sdk/index.ts';
import type { TestLike } from '../../helpers/app.ts';

/** Runs a program to its end; its exit code and stdout/stderr. */
export function run(file: string, args: string[], input?: Buffer): Promise<{ code: number | null; out: Buffer; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-8000); });
    if (input) { child.stdin!.on('error', () => {}); child.stdin!.end(input); }
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, out: Buffer.concat(out), err }); });
  });
}

/** `seconds` of H.264 (keyframe every second: 10 fps, GOP 10) and AAC as MPEG-TS, made by ffmpeg. */
export async function testTs(t: TestLike, seconds: number): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'rec-ts-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'src.ts');
  const r = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=160x120:rate=10',
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100', '-t', String(seconds), '-c:v', 'libx264', '-preset', 'ultrafast',
    '-g', '10', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '32k', '-f', 'mpegts', file]);
  if (r.code !== 0) throw new Error(`ffmpeg failed: ${r.err}`);
  return readFile(file);
}

export interface Probe { firstKey: boolean; firstPts: number; duration: number; frames: number }

/** ffprobe of a file given as bytes: is the first video frame a keyframe, its time, the video duration and frame count. */
export async function probe(file: Buffer, format: 'mp4' | 'mpegts'): Promise<Probe> {
  const r = await run('ffprobe', ['-v', 'error', '-f', format, '-select_streams', 'v:0', '-show_frames',
    '-show_entries', 'frame=key_frame,pts_time,best_effort_timestamp_time', '-of', 'csv=p=0', 'pipe:0'], file);
  if (r.code !== 0) throw new Error(`ffprobe failed: ${r.err}`);
  const rows = r.out.toString().trim().split('\n').map((l) => l.split(','));
  const times = rows.map((c) => Number(c[1] === 'N/A' || c[1] === undefined ? c[2] : c[1]));
  return { firstKey: rows[0]?.[0] === '1', firstPts: times[0] ?? NaN, duration: (times.at(-1) ?? 0) - (times[0] ?? 0) + 0.1, frames: rows.length };
}

/** A filesystem in a Map, with `writeFile` only (the plugin's fallback path). */
export function mapFs(): FilesystemService & { files: Map<string, Buffer> } {
  const files = new Map<string, Buffer>();
  return {
    files, name: 'map', type: 'mem', mount: '/map',
    list: async () => [...files].map(([name, b]) => ({ name, size_bytes: b.length, last_modified: 0 })),
    stat: async (p) => (files.has(p) ? { name: p, size_bytes: files.get(p)!.length, last_modified: 0 } : undefined),
    readFile: async (p) => files.get(p),
    writeFile: async (p, d) => { const created = !files.has(p); files.set(p, Buffer.from(d)); return { created }; },
    deleteFile: async (p) => files.delete(p),
    usage: () => ({ used: 0, limit: 0 }),
  };
}
