// The error-frame clip: encoded ONCE per stream parameters (and image) into an MPEG-TS Buffer with the
// same codecs, size, frame rate, pixel format and audio layout as the source, one GOP long. The relay
// then loops it by rewriting timestamps, so no encoder runs while the source is gone.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StreamParams } from './stream-params.ts';
import type { Ffmpeg } from './ffmpeg.ts';
import { imageSizeProblem } from './image-size.ts';

/** Used before any source was seen (documented in the README). */
export const DEFAULT_PARAMS: StreamParams = {
  video: { codec: 'h264', width: 640, height: 360, fps: 25, pixFmt: 'yuv420p', profile: '' },
  audio: { codec: 'aac', rate: 48000, layout: 'stereo' },
};

const AUDIO_FRAME: Record<string, number> = { aac: 1024, mp3: 1152, mp2: 1152, ac3: 1536, opus: 960 };
const AUDIO_ENCODER: Record<string, string> = { aac: 'aac', mp3: 'libmp3lame', mp2: 'mp2', ac3: 'ac3', opus: 'libopus' };

/** The image's file extension from its first bytes, so ffmpeg's image2 demuxer picks the decoder. */
export function imageExtension(image: Buffer): string | undefined {
  if (image.length > 8 && image.readUInt32BE(0) === 0x89504e47) return 'png';
  if (image.length > 3 && image[0] === 0xff && image[1] === 0xd8) return 'jpg';
  if (image.length > 2 && image[0] === 0x42 && image[1] === 0x4d) return 'bmp';
  if (image.length > 12 && image.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  if (image.length > 4 && image.toString('latin1', 0, 4) === 'GIF8') return 'gif';
  return undefined;
}

/**
 * Frames in the clip: 1–2 s, preferring a length that holds a whole number of audio frames, so the
 * looped audio has no gap or overlap at the loop point.
 */
export function clipFrames(params: StreamParams): number {
  const fps = params.video?.fps || 25;
  const lo = Math.max(1, Math.round(fps));
  const a = params.audio;
  if (!a) return lo;
  const frame = AUDIO_FRAME[a.codec] ?? 1024;
  let best = lo;
  let bestErr = Infinity;
  for (let n = lo; n <= 2 * lo; n++) {
    const samples = (n / fps) * a.rate;
    const err = Math.abs(samples - Math.round(samples / frame) * frame);
    if (err < bestErr - 1e-6) { best = n; bestErr = err; }
  }
  return best;
}

/** x264 profiles by ffmpeg's name, so the clip does not need more of the decoder than the source. */
const X264_PROFILE: Record<string, string> = { 'Constrained Baseline': 'baseline', Baseline: 'baseline', Main: 'main', High: 'high' };

function videoEncoder(codec: string, n: number, profile: string): string[] {
  if (codec === 'hevc') return ['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', `log-level=error:keyint=${n}:min-keyint=${n}:bframes=0:scenecut=0`];
  if (codec === 'mpeg2video') return ['-c:v', 'mpeg2video', '-g', String(n), '-bf', '0', '-q:v', '4'];
  const p = X264_PROFILE[profile];
  return ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'stillimage', '-g', String(n), '-bf', '0', '-sc_threshold', '0',
    ...(p ? ['-profile:v', p] : [])];
}

function layoutName(layout: string): string {
  const m = /^(\d+) channels/.exec(layout);
  return m ? `${m[1]}c` : layout;
}

export interface ClipRequest {
  ffmpeg: Ffmpeg;
  params: StreamParams;
  /** The error-frame image; a generated slate showing `label` when absent. */
  image?: Buffer;
  label: string;
  /** Draw the label (needs a font). */
  text?: boolean;
  /** Leave out what may fail on an odd source (profile, text): the second attempt. */
  plain?: boolean;
}

/** ffmpeg arguments for the clip, reading files in `dir` (image / slate text). */
export function clipArgs(req: ClipRequest, dir: string, imageFile: string | undefined): string[] {
  const p = req.params;
  const v = p.video;
  const n = clipFrames(p);
  const fps = v?.fps || 25;
  const dur = (v ? n / fps : 1).toFixed(6);
  const args = ['-hide_banner', '-nostdin', '-loglevel', 'error'];
  // durations on the inputs, not -frames:v: ffmpeg ends the audio early when the video hits a frame limit
  if (v) {
    const size = `${v.width}x${v.height}`;
    if (imageFile) args.push('-loop', '1', '-framerate', String(fps), '-t', dur, '-i', imageFile);
    else args.push('-f', 'lavfi', '-i', `color=c=0x202838:s=${size}:r=${fps}:d=${dur}`);
  }
  if (p.audio) args.push('-f', 'lavfi', '-t', dur, '-i', `anullsrc=r=${p.audio.rate}:cl=${layoutName(p.audio.layout)}`);
  if (v) {
    const fmt = `format=${v.pixFmt || 'yuv420p'}`;
    const vf = imageFile
      ? `scale=${v.width}:${v.height}:force_original_aspect_ratio=decrease,pad=${v.width}:${v.height}:(ow-iw)/2:(oh-ih)/2,setsar=1,${fmt}`
      : req.text && !req.plain ? `drawtext=textfile=${join(dir, 'slate.txt')}:fontcolor=white:fontsize=h/14:x=(w-tw)/2:y=(h-th)/2,${fmt}` : fmt;
    args.push('-map', '0:v', '-vf', vf, '-r', String(fps), ...videoEncoder(v.codec, n, req.plain ? '' : v.profile));
  }
  if (p.audio) {
    args.push('-map', `${v ? 1 : 0}:a`, '-c:a', AUDIO_ENCODER[p.audio.codec] ?? 'aac', '-b:a', '64k', '-ar', String(p.audio.rate));
  }
  args.push('-f', 'mpegts', '-muxdelay', '0', '-muxpreload', '0', '-pes_payload_size', '0', 'pipe:1');
  return args;
}

function run(ffmpeg: Ffmpeg, args: string[], stdin?: Buffer): Promise<{ code: number | null; out: Buffer; err: string }> {
  return new Promise((resolve) => {
    let child;
    try {
      child = ffmpeg.spawn(ffmpeg.binary, args, { stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    } catch (e) {
      resolve({ code: null, out: Buffer.alloc(0), err: (e as Error).message });
      return;
    }
    const out: Buffer[] = [];
    let err = '';
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => { err = (err + c.toString()).slice(-2000); });
    child.on('error', (e) => { err += e.message; });
    child.on('close', (code) => resolve({ code, out: Buffer.concat(out), err }));
    if (stdin) child.stdin!.end(stdin);
  });
}

/**
 * Encodes the clip; when that fails (no font for the slate text, a profile the pixel format does not
 * allow) once more plainly; throws with ffmpeg's last words when that fails too.
 */
export async function encodeClip(req: ClipRequest): Promise<Buffer> {
  try {
    return await encodeOnce(req);
  } catch (err) {
    if (req.plain) throw err;
    return encodeOnce({ ...req, plain: true });
  }
}

async function encodeOnce(req: ClipRequest): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'playout-clip-'));
  try {
    let imageFile: string | undefined;
    if (req.image) {
      imageFile = join(dir, `image.${imageExtension(req.image) ?? 'png'}`);
      await writeFile(imageFile, req.image);
    }
    await writeFile(join(dir, 'slate.txt'), `${req.label}: source lost`);
    const r = await run(req.ffmpeg, clipArgs(req, dir, imageFile));
    if (r.code !== 0 || r.out.length < 188) throw new Error(`error frame encode failed: ${r.err.trim().split('\n').pop() ?? r.code}`);
    return r.out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Why the image cannot be an error frame: its header's size (read before ffmpeg sees it; a PNG
 * of 16000x16000 held the encoder 109 s at 3.1 GB), or ffmpeg does not decode it (jpg/png/bmp/webp/gif).
 */
export async function imageProblem(ffmpeg: Ffmpeg, image: Buffer): Promise<string | undefined> {
  const size = imageSizeProblem(image);
  if (size || !imageExtension(image)) return size ?? 'not a PNG, JPEG, BMP, WebP or GIF image';
  const r = await run(ffmpeg, ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', 'pipe:0', '-frames:v', '1', '-f', 'null', '-'], image);
  return r.code === 0 && !/error/i.test(r.err) ? undefined : 'the image cannot be decoded';
}
