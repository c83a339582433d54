import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { background, drawStamp, FPS, HEIGHT, WIDTH } from './barcode.ts';

/**
 * Publisher of the WHEP bench (`whep.ts`): makes raw yuv420p frames, 1280x720 at 25 fps paced by
 * the wall clock, each with its Date.now() drawn in as a barcode (barcode.ts) just before it goes
 * into ffmpeg's stdin; ffmpeg encodes H.264 (libx264 ultrafast, zerolatency, a keyframe a second,
 * 2.5 Mbit/s) and AAC 64 kbit/s of a 440 Hz sine, and publishes FLV over RTMP.
 *
 *   node bench/webrtc/whep-publisher.ts rtmp://127.0.0.1:<port>/live/<name> [audio: pipe|lavfi|none]
 *
 * Audio `pipe` (the default): the sine is written here, 40 ms of PCM with each frame, into ffmpeg's
 * fd 3, so audio and video reach ffmpeg in step as from a capture card. `lavfi`: ffmpeg's own
 * `-re -f lavfi -i sine`, paced from ffmpeg's start: it starts behind the piped video (which
 * queues while ffmpeg starts) and the FLV muxer holds each video packet until the audio catches
 * up, ~150 ms more delay on this box that is the publisher's, not the service's. `none`: no audio.
 *
 * Messages: sends `{ ready, ffmpegPid }` at the first frame; `{stats}` -> `{ stats, frames, late,
 * maxQueuedFrames, flvBytes, outUs }` (frames written, frames written over 20 ms after their due
 * time, most frames waiting in the pipe, ffmpeg's `-progress` total_size and out_time_us);
 * `{exit}` ends ffmpeg and the process, as does a parent that goes away.
 */
const [url, audio = 'pipe'] = process.argv.slice(2);
if (!url || !['pipe', 'lavfi', 'none'].includes(audio)) throw new Error('usage: whep-publisher.ts <rtmp url> [pipe|lavfi|none]');

const FRAME_MS = 1000 / FPS;
const FRAME_BYTES = WIDTH * HEIGHT * 3 / 2;
const RATE = 48_000;
const send = (m: object): void => { process.send?.(m); };

/** One second of the sine, s16le mono (440 whole periods: slices of it join without a click). */
function sine(): Buffer {
  const b = Buffer.alloc(RATE * 2);
  for (let i = 0; i < RATE; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
  return b;
}

const AUDIO_IN: Record<string, string[]> = {
  pipe: ['-f', 's16le', '-ar', String(RATE), '-ac', '1', '-i', 'pipe:3', '-map', '0:v', '-map', '1:a'],
  lavfi: ['-re', '-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=${RATE}`, '-map', '0:v', '-map', '1:a'],
  none: ['-map', '0:v'],
};

const ffmpeg = spawn('ffmpeg', [
  '-hide_banner', '-loglevel', 'error', '-nostats',
  '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-s', `${WIDTH}x${HEIGHT}`, '-framerate', String(FPS), '-i', 'pipe:0',
  ...AUDIO_IN[audio]!,
  '-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '25', '-b:v', '2500k', '-pix_fmt', 'yuv420p',
  ...(audio === 'none' ? ['-an'] : ['-c:a', 'aac', '-b:a', '64k', '-ac', '2']),
  '-progress', 'pipe:1', '-f', 'flv', '-flvflags', 'no_duration_filesize', url,
], { stdio: ['pipe', 'pipe', 'inherit', 'pipe'] });
const stdin = ffmpeg.stdin!;
const pcmIn = ffmpeg.stdio[3] as Writable;
pcmIn.on('error', () => { /* ffmpeg ended: its exit says so */ });
const pcm = sine();
const PCM_FRAME = (RATE / FPS) * 2;

const stats = { frames: 0, late: 0, maxQueuedFrames: 0, flvBytes: 0, outUs: 0 };
let stopping = false;

ffmpeg.stdout!.setEncoding('utf8');
ffmpeg.stdout!.on('data', (text: string) => {
  for (const line of text.split('\n')) {
    const [k, v] = line.split('=');
    if (k === 'total_size' && Number.isFinite(Number(v))) stats.flvBytes = Number(v);
    if (k === 'out_time_us' && Number.isFinite(Number(v))) stats.outUs = Number(v);
  }
});
stdin.on('error', () => { /* ffmpeg ended: its exit says so */ });
ffmpeg.on('exit', (code, signal) => {
  if (stopping) return;
  send({ error: 'publisher', message: `ffmpeg ended (${signal ?? code})` });
  process.exit(1);
});

const pool = background(25);
const start = performance.now();
let timer: NodeJS.Timeout | undefined;

/** One frame: the next background, today's time drawn in, into the pipe; the next is due one frame later. */
function tick(): void {
  const due = start + stats.frames * FRAME_MS;
  if (performance.now() - due > 20) stats.late++;
  const frame = Buffer.allocUnsafe(FRAME_BYTES);
  pool[stats.frames % pool.length]!.copy(frame);
  drawStamp(frame, Date.now());
  stdin.write(frame);
  if (audio === 'pipe') pcmIn.write(pcm.subarray((stats.frames % FPS) * PCM_FRAME, (stats.frames % FPS + 1) * PCM_FRAME));
  stats.frames++;
  stats.maxQueuedFrames = Math.max(stats.maxQueuedFrames, Math.floor(stdin.writableLength / FRAME_BYTES));
  if (stats.frames === 1) send({ ready: true, ffmpegPid: ffmpeg.pid });
  timer = setTimeout(tick, Math.max(0, start + stats.frames * FRAME_MS - performance.now()));
}

/** Ends ffmpeg and waits for it (reaped: no zombie left), then exits. */
function stop(): void {
  if (stopping) return;
  stopping = true;
  clearTimeout(timer);
  if (ffmpeg.exitCode !== null || ffmpeg.signalCode !== null) process.exit(0);
  ffmpeg.once('exit', () => process.exit(0));
  ffmpeg.kill('SIGKILL');
}

process.on('disconnect', stop);
process.on('SIGTERM', stop);
process.on('message', (m: { stats?: true; exit?: true }) => {
  if (m.stats) send({ stats: true, ...stats });
  if (m.exit) stop();
});
tick();
