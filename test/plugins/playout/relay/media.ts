// Real ffmpeg around a relay under test: a pusher feeding the source URL, a consumer reading the relay's
// port into a file, and ffprobe to read the consumer's timestamps back.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import type { TestLike } from '../../../helpers/app.ts';

export { alive } from '../../../helpers/net-proc.ts';

export const log = pino({ level: process.env.RELAY_TEST_LOG ?? 'silent' });

/** A free loopback TCP port: bind 0, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export function tempDir(t: TestLike): string {
  const dir = mkdtempSync(join(tmpdir(), 'relay-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Child { proc: ChildProcess; exited: Promise<void>; kill(): Promise<void> }

function child(t: TestLike, args: string[]): Child {
  const proc = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'ignore'] });
  const exited = new Promise<void>((r) => proc.once('close', () => r()));
  const c = {
    proc, exited,
    kill: () => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); return exited; },
  };
  t.teardown(() => c.kill());
  return c;
}

/** Test media pushed in real time as MPEG-TS to `url` (a listening source ffmpeg). */
export function startPusher(t: TestLike, url: string, opts: PushOptions = {}): Child {
  const size = opts.size ?? '320x240';
  const rate = opts.rate ?? 25;
  const audio = opts.audio ?? true;
  return child(t, [
    '-hide_banner', '-loglevel', 'error', '-re', '-f', 'lavfi', '-i', `testsrc2=size=${size}:rate=${rate}`,
    ...(audio ? ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-ac', '2'] : []),
    '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', String(rate), '-sc_threshold', '0', '-pix_fmt', 'yuv420p',
    ...(audio ? ['-c:a', 'aac', '-b:a', '64k'] : []), '-f', 'mpegts', url,
  ]);
}

export interface PushOptions { size?: string; rate?: number; audio?: boolean }

/** The supervised process's stand-in: reads the relay and copies it into `file`. */
export function startConsumer(t: TestLike, port: number, file: string): Child {
  return child(t, ['-hide_banner', '-loglevel', 'error', '-f', 'mpegts', '-i', `tcp://127.0.0.1:${port}`,
    '-map', '0', '-c', 'copy', '-f', 'mpegts', '-y', file]);
}

export interface ProbedPacket { type: string; dts: number; key: boolean }

/** Packets of a TS file as ffprobe reads them (timestamps in seconds). */
export function probePackets(file: string): ProbedPacket[] {
  const r = spawnSync('ffprobe', ['-v', 'error', '-show_entries', 'packet=codec_type,dts_time,flags', '-of', 'csv=p=0', file], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean).map((l) => {
    const [type, dts, flags] = l.split(',');
    return { type: type!, dts: Number(dts), key: (flags ?? '').startsWith('K') };
  }).filter((p) => Number.isFinite(p.dts));
}

/** The worst steps between consecutive DTS of one stream type: the largest gap and the smallest step. */
export function dtsSteps(packets: ProbedPacket[], type: string): { maxGap: number; minStep: number; count: number } {
  const d = packets.filter((p) => p.type === type).map((p) => p.dts);
  let maxGap = 0;
  let minStep = Infinity;
  for (let i = 1; i < d.length; i++) {
    maxGap = Math.max(maxGap, d[i]! - d[i - 1]!);
    minStep = Math.min(minStep, d[i]! - d[i - 1]!);
  }
  return { maxGap, minStep, count: d.length };
}


/** Keeps (re)starting a pusher until the listening source accepted it (a refused pusher exits at once). */
export async function pushInto(t: TestLike, port: number, connected: () => boolean, opts: PushOptions = {}): Promise<Child> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const p = startPusher(t, `tcp://127.0.0.1:${port}`, opts);
    const ok = await Promise.race([
      p.exited.then(() => false),
      (async () => { while (!connected() && p.proc.exitCode === null) await new Promise((r) => setTimeout(r, 100)); return connected(); })(),
    ]);
    if (ok) return p;
    await p.kill();
    if (Date.now() > deadline) throw new Error('the pusher never got through to the source');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A raw reader of the relay's port: keeps every byte, to check what a consumer really got. */
export function capture(t: TestLike, port: number): { bytes: () => Buffer; close: () => void } {
  const chunks: Buffer[] = [];
  const s = connect(port, '127.0.0.1');
  s.on('data', (c: Buffer) => chunks.push(c));
  s.on('error', () => undefined);
  t.teardown(() => s.destroy());
  return { bytes: () => Buffer.concat(chunks), close: () => s.destroy() };
}

/** A small still image made by ffmpeg (`color` is an ffmpeg colour name). */
export function stillImage(color: string, kind: 'png' | 'mjpeg' = 'png'): Buffer {
  return spawnSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `color=${color}:s=64x48`, '-frames:v', '1',
    '-c:v', kind, '-f', 'image2pipe', 'pipe:1']).stdout;
}

/** Mean RGB of the first video frame of a TS file (or image), by scaling it to one pixel. */
export function meanColor(file: string): number[] {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-i', file, '-frames:v', '1', '-vf', 'scale=1:1', '-pix_fmt', 'rgb24', '-f', 'rawvideo', 'pipe:1']);
  return [...r.stdout.subarray(0, 3)];
}

/** Width x height of the first video stream. */
export function videoSize(file: string): string {
  const r = spawnSync('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=s=x:p=0', file], { encoding: 'utf8' });
  return r.stdout.split('\n').find((l) => l.trim() !== '') ?? '';
}

/** Whether the relay's error-frame clip was encoded for the source's parameters (not the default slate). */
export function clipMatches(status: { debug: unknown }): boolean {
  const d = status.debug as { params: string; clip: string };
  return d.params !== '' && d.clip === d.params;
}
