import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import type { TestLike } from '../../helpers/app.ts';

export const FFMPEG = '/usr/bin/ffmpeg';
export const FFPROBE = '/usr/bin/ffprobe';

/** A free port `p` such that p..p+n-1 is (very likely) free: the pool skips any that is not. */
export async function portRange(n: number): Promise<[number, number]> {
  for (;;) {
    const p = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    if (p + n - 1 <= 65535) return [p, p + n - 1];
  }
}

export interface Child {
  child: ChildProcess;
  done: Promise<number | null>;
  stderr(): string;
}

/** ffmpeg in the background, killed at teardown. */
export function background(t: TestLike, args: string[]): Child {
  const child = spawn(FFMPEG, ['-hide_banner', '-nostdin', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-10_000); });
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) { child.kill('SIGKILL'); await done; }
  });
  return { child, done, stderr: () => err };
}

/** A live test source (testsrc2 + sine, H.264/AAC, 25 fps, one keyframe a second) published to `url`. */
export function publish(t: TestLike, url: string, size = '320x240'): Child {
  return background(t, [
    '-loglevel', 'warning', '-re',
    '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=25`,
    '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100',
    '-t', '600', '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '32k', '-f', 'flv', url,
  ]);
}

/** Runs a binary to its end with `input` on stdin; stdout as bytes. */
export function run(bin: string, args: string[], input?: Buffer): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-10_000); });
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout: Buffer.concat(out), stderr: err }); });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** The mean colour [r, g, b] of the last video frame of an MPEG-TS segment. */
export async function lastColour(ts: Buffer): Promise<[number, number, number]> {
  const r = await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'mpegts', '-i', 'pipe:0',
    '-an', '-vf', 'scale=1:1:flags=area,format=rgb24', '-f', 'rawvideo', 'pipe:1'], ts);
  if (r.code !== 0 || r.stdout.length < 3) throw new Error(`segment does not decode: ${r.stderr}`);
  const b = r.stdout.subarray(r.stdout.length - 3);
  return [b[0]!, b[1]!, b[2]!];
}

/** Start time (seconds) of an MPEG-TS segment. */
export async function timing(ts: Buffer): Promise<{ start: number }> {
  const r = await run(FFPROBE, ['-v', 'error', '-show_entries', 'format=start_time', '-of', 'json', '-f', 'mpegts', '-i', 'pipe:0'], ts);
  const f = (JSON.parse(r.stdout.toString()) as { format: { start_time: string } }).format;
  return { start: Number(f.start_time) };
}

/** An image of one solid colour (ffmpeg's colour names), PNG or JPEG by `codec`. */
export async function solidImage(colour: string, codec: 'png' | 'mjpeg' = 'png'): Promise<Buffer> {
  const r = await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `color=c=${colour}:s=320x240`,
    '-frames:v', '1', '-c:v', codec, '-f', 'image2pipe', 'pipe:1']);
  return r.stdout;
}

/** Pids of processes whose command line contains every one of `parts` (children of this test only). */
export function pidsWith(...parts: string[]): number[] {
  const pids: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (parts.every((p) => cmd.includes(p))) pids.push(Number(d));
    } catch { /* gone meanwhile */ }
  }
  return pids;
}
