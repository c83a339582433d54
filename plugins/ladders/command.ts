import { createHash } from 'node:crypto';
import type { ProcessesService } from '../../sdk/index.ts';
import type { Ladder, Rung } from './presets.ts';

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
/** Encoders `ladders.encoder` may name today. */
export const ENCODERS: readonly string[] = ['auto', 'libx264'];

export interface CommandOptions {
  /** `ladders.encoder` (`auto` is libx264 today). */
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
export function filterGraph(encoded: readonly Rung[]): string | undefined {
  if (encoded.length === 0) return undefined;
  const scale = (r: Rung, i: number) => `scale=w=-2:h='trunc(min(${r.height},ih)/2)*2'[v${i}]`;
  if (encoded.length === 1) return `[0:v:0]${scale(encoded[0]!, 0)}`;
  const split = `[0:v:0]split=${encoded.length}${encoded.map((_, i) => `[s${i}]`).join('')}`;
  return [split, ...encoded.map((r, i) => `[s${i}]${scale(r, i)}`)].join(';');
}

function audioArgs(r: Rung): string[] {
  return r.audio_kbps > 0 ? ['-map', '0:a:0?', '-c:a', 'aac', '-b:a', `${r.audio_kbps}k`] : ['-an'];
}

/** The output options of an encoded video rung fed by `[v<index>]`. */
export function videoArgs(r: Rung, index: number, gop: number, o: CommandOptions): string[] {
  const encoder = o.encoder === 'auto' ? 'libx264' : o.encoder;
  const args = ['-map', `[v${index}]`, ...audioArgs(r), '-c:v', encoder, '-preset', o.preset, '-profile:v', r.profile, '-pix_fmt', 'yuv420p',
    '-b:v', `${r.video_kbps}k`, '-maxrate', `${r.video_kbps}k`, '-bufsize', `${r.video_kbps * 2}k`];
  if (r.fps !== undefined) args.push('-r', String(r.fps));
  // keyframes at the same times in every rung: forced on the clock, none of the encoder's own
  // (no scene cuts, a keyint longer than the GOP); no B-frames, so a keyframe's PTS is its DTS
  // in every rung whatever its profile or frame rate (B-frames would shift each rung's stamps)
  const keyint = r.fps !== undefined ? Math.ceil(gop * r.fps) * 2 : Math.ceil(gop * 120);
  args.push('-bf', '0', '-g', String(keyint), '-sc_threshold', '0', '-force_key_frames', `expr:gte(t,n_forced*${gop})`);
  if (encoder === 'libx264') args.push('-forced-idr', '1');
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

/** The process that makes the renditions of `stream` by `ladder`. */
export function ladderProcess(ladder: Ladder, stream: string, o: CommandOptions): ProcessDefinition {
  const encoded = ladder.rungs.filter((r) => !r.copy && r.height > 0);
  const graph = filterGraph(encoded);
  return {
    id: ladderProcessId(stream),
    reference: LADDER_REFERENCE,
    input: [{ id: 'in', address: `{rtmp,name=${stream}}`, options: [] }],
    output: ladder.rungs.map((r) => ({
      id: r.name, address: `{rtmp,name=${stream}/${r.name}}`, options: rungArgs(r, encoded.indexOf(r), ladder.gop_seconds, o),
    })),
    options: graph === undefined ? [] : ['-filter_complex', graph],
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
