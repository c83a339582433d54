import { createHash } from 'node:crypto';
import { pickEncoder, type EncoderSkills, type ProcessesService } from '../../sdk/index.ts';
import type { Ladder, Rung, SourceMedia } from './presets.ts';

/*
 * The one process of a ladder for one stream: its input reads the stream from the service's RTMP
 * listener, one `-filter_complex` decodes it once and splits it (`split=N`, a `scale` per encoded
 * rung keeping the aspect, even sizes, never above the source), each rung is one `-f flv` output
 * published back as `<stream>/<rung>`. Pure: tested in-process.
 */

/** What `ProcessesService.put` takes. */
export type ProcessDefinition = Parameters<ProcessesService['put']>[0];

/** The reference of every ladder process (how the plugin finds its own in the engine). */
export const LADDER_REFERENCE = 'ladders';
/** Prefix of every ladder process id. */
export const ID_PREFIX = 'ladder:';

/** The x264 presets `ladders.preset` may name. */
export const X264_PRESETS: readonly string[] = ['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow', 'slower', 'veryslow'];
/** Encoders `ladders.encoder` may name (`auto`: a hardware one whose device is present, else libx264). */
export const ENCODERS: readonly string[] = ['auto', 'libx264', 'h264_nvenc', 'h264_qsv', 'h264_vaapi'];

/**
 * The encoder of `ladders.encoder` on this machine: `auto` is a hardware one the skills list whose
 * device is present (NVENC, Quick Sync, VAAPI: the SDK's `pickEncoder`), else libx264; a named one
 * the machine cannot run is kept (its processes fail and say why) with the `problem` to log.
 */
export function encoderFor(want: string, skills: EncoderSkills | undefined, devices: ReadonlySet<string>): { encoder: string; problem?: string } {
  try {
    return { encoder: pickEncoder(skills ?? { codecs: { video: [] } }, want, devices) };
  } catch (err) {
    return { encoder: want, problem: (err as Error).message };
  }
}

/** The render node a VAAPI encoder uploads frames to (the SDK's `presentDevices` looks for it). */
export const VAAPI_DEVICE = '/dev/dri/renderD128';

export interface CommandOptions {
  /** The encoder the plugin chose from `ladders.encoder` (`auto` resolved at start; left `auto`, libx264). */
  encoder: string;
  /** `ladders.preset`. */
  preset: string;
  /** The section's `idle_seconds` (a ladder's own wins). */
  idleSeconds: number;
}

/**
 * The process id of the ladder of `stream`: `ladder:` and the name with `/` as `_` (`live/cam` ->
 * `ladder:live_cam`, one path segment in `/api/v3/process/{id}`); a name that has `_` itself gets
 * `~` and 8 hex digits of its hash, so `live_cam` and `live/cam` never share one.
 */
export function ladderProcessId(stream: string): string {
  const id = `${ID_PREFIX}${stream.replaceAll('/', '_')}`;
  return stream.includes('_') ? `${id}~${createHash('sha256').update(stream).digest('hex').slice(0, 8)}` : id;
}

/** The filter graph of the encoded video rungs: `[v<i>]` for the i-th, undefined when none. */
export function filterGraph(encoded: readonly Rung[], encoder = 'libx264'): string | undefined {
  if (encoded.length === 0) return undefined;
  // VAAPI encodes frames in the GPU's memory: each scaled picture is uploaded
  const upload = encoder === 'h264_vaapi' ? ',format=nv12,hwupload' : '';
  const scale = (r: Rung, i: number) => `scale=w=-2:h='trunc(min(${r.height},ih)/2)*2'${upload}[v${i}]`;
  if (encoded.length === 1) return `[0:v:0]${scale(encoded[0]!, 0)}`;
  const split = `[0:v:0]split=${encoded.length}${encoded.map((_, i) => `[s${i}]`).join('')}`;
  return [split, ...encoded.map((r, i) => `[s${i}]${scale(r, i)}`)].join(';');
}

function audioArgs(r: Rung): string[] {
  return r.audio_kbps > 0 ? ['-map', '0:a:0?', '-c:a', 'aac', '-b:a', `${r.audio_kbps}k`] : ['-an'];
}

/** Rate control of a rung: constant `-b:v`, `-maxrate` the same, a buffer of two seconds' worth. */
const rate = (r: Rung) => ['-b:v', `${r.video_kbps}k`, '-maxrate', `${r.video_kbps}k`, '-bufsize', `${r.video_kbps * 2}k`];

/**
 * Each encoder's options for the same rung: its speed setting and profile (`head`), and how it
 * keeps keyframes only where forced (`cuts`: no scene cuts of its own; `idr`: a forced one is an
 * IDR frame). The hardware ones follow ffmpeg's documentation of each encoder; CI has no GPU, so
 * they are checked as arguments only.
 */
function encoderArgs(encoder: string, r: Rung, o: CommandOptions): { head: string[]; cuts: string[]; idr: string[] } {
  switch (encoder) {
    case 'h264_nvenc':
      return { head: ['-c:v', encoder, '-preset', 'p4', '-tune', 'll', '-rc', 'cbr', '-profile:v', r.profile, ...rate(r)], cuts: ['-no-scenecut', '1'], idr: ['-forced-idr', '1'] };
    case 'h264_qsv':
      return { head: ['-c:v', encoder, '-preset', o.preset, '-profile:v', r.profile, ...rate(r), '-look_ahead', '0'], cuts: [], idr: ['-forced_idr', '1'] };
    case 'h264_vaapi':
      return { head: ['-c:v', encoder, '-profile:v', r.profile === 'baseline' ? 'constrained_baseline' : r.profile, ...rate(r)], cuts: [], idr: [] };
    default:
      return { head: ['-c:v', encoder, '-preset', o.preset, '-profile:v', r.profile, '-pix_fmt', 'yuv420p', ...rate(r)], cuts: ['-sc_threshold', '0'], idr: ['-forced-idr', '1'] };
  }
}

/** The output options of an encoded video rung fed by `[v<index>]`. */
export function videoArgs(r: Rung, index: number, gop: number, o: CommandOptions): string[] {
  const encoder = o.encoder === 'auto' ? 'libx264' : o.encoder;
  const e = encoderArgs(encoder, r, o);
  const args = ['-map', `[v${index}]`, ...audioArgs(r), ...e.head];
  if (r.fps !== undefined) args.push('-r', String(r.fps));
  // keyframes at the same times in every rung: forced on the clock, none of the encoder's own
  // (no scene cuts, a keyint longer than the GOP); no B-frames, so a keyframe's PTS is its DTS
  // in every rung whatever its profile or frame rate (B-frames would shift each rung's stamps)
  const keyint = r.fps !== undefined ? Math.ceil(gop * r.fps) * 2 : Math.ceil(gop * 120);
  args.push('-bf', '0', '-g', String(keyint), ...e.cuts, '-force_key_frames', `expr:gte(t,n_forced*${gop})`, ...e.idr);
  return args;
}

/** The output options of one rung (`[v<index>]` for an encoded video rung). */
function rungArgs(r: Rung, index: number, gop: number, o: CommandOptions): string[] {
  let args: string[];
  if (r.copy) args = ['-map', '0:v:0', ...audioArgs(r), '-c:v', 'copy'];
  else if (r.height === 0) args = ['-map', '0:a:0', '-vn', '-c:a', 'aac', '-b:a', `${r.audio_kbps}k`];
  else args = videoArgs(r, index, gop, o);
  return [...args, '-flvflags', 'no_duration_filesize', '-f', 'flv'];
}

/**
 * Input options for a source known to carry one kind of media: over RTMP ffmpeg is told of both
 * kinds and would wait its whole probe time (5 s) for the other before its first output.
 */
const ONE_KIND = ['-analyzeduration', '500000'];

/** The process that makes the renditions of `stream` by `ladder` (`media`: what the source carries, once known). */
export function ladderProcess(ladder: Ladder, stream: string, o: CommandOptions, media?: SourceMedia): ProcessDefinition {
  const encoded = ladder.rungs.filter((r) => !r.copy && r.height > 0);
  const graph = filterGraph(encoded, o.encoder);
  const device = o.encoder === 'h264_vaapi' && graph !== undefined ? ['-vaapi_device', VAAPI_DEVICE] : [];
  return {
    id: ladderProcessId(stream),
    reference: LADDER_REFERENCE,
    input: [{ id: 'in', address: `{rtmp,name=${stream}}`, options: media && media.audio !== media.video ? [...ONE_KIND] : [] }],
    output: ladder.rungs.map((r) => ({
      id: r.name, address: `{rtmp,name=${stream}/${r.name}}`, options: rungArgs(r, encoded.indexOf(r), ladder.gop_seconds, o),
    })),
    options: graph === undefined ? [] : [...device, '-filter_complex', graph],
    reconnect: true,
    reconnect_delay_seconds: 2,
    autostart: true,
    stale_timeout_seconds: 30,
    limits: { ...ladder.limits },
    ondemand: { enable: true, idle_seconds: ladder.idle_seconds || o.idleSeconds },
  };
}

/** The stream a ladder process reads (its input `{rtmp,name=S}`), or undefined for another process. */
export function streamOfProcess(address: string | undefined): string | undefined {
  const m = /^\{rtmp,name=(.+)\}$/.exec(address ?? '');
  return m?.[1];
}
