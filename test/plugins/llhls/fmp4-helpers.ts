// Test helpers of the fMP4 muxer: FLV files made by ffmpeg, read as the stream table's packets,
// muxed, and what ffprobe / ffmpeg make of the result.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flvPacketOf, type FlvPacket } from '../../../sdk/index.ts';
import { readFlv } from '../../core/streams/remux/helpers.ts';
import { Fmp4Muxer, type Fmp4Fragment } from '../../../plugins/llhls/fmp4.ts';

/** Why the checks are skipped, or false when ffmpeg and ffprobe run. */
export const noFfmpeg: string | false = ['ffmpeg', 'ffprobe'].every((p) => spawnSync(p, ['-version'], { stdio: 'ignore' }).status === 0)
  ? false : 'ffmpeg/ffprobe not found on PATH (apt-get install ffmpeg)';

const VIDEO_IN = ['-f', 'lavfi', '-i', 'testsrc2=size=320x180:rate=25'];
const AUDIO_IN = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=44100'];
const VIDEO_OUT = ['-c:v', 'libx264', '-preset', 'veryfast', '-g', '25', '-keyint_min', '25', '-bf', '2', '-pix_fmt', 'yuv420p'];
const AUDIO_OUT = ['-c:a', 'aac', '-b:a', '64k', '-ac', '2'];

/** Makes `<dir>/<kind>.flv` of 3 s: video and audio, video only or audio only. */
export function makeFlv(dir: string, kind: 'av' | 'video' | 'audio'): string {
  const file = join(dir, `${kind}.flv`);
  const args = kind === 'av' ? [...VIDEO_IN, ...AUDIO_IN, ...VIDEO_OUT, ...AUDIO_OUT]
    : kind === 'video' ? [...VIDEO_IN, ...VIDEO_OUT] : [...AUDIO_IN, ...AUDIO_OUT];
  const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args, '-t', '3', '-f', 'flv', file]);
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr.toString()}`);
  return file;
}

/** The tags of an FLV file as the stream table carries them. */
export function flvPackets(file: string): FlvPacket[] {
  return readFlv(readFileSync(file)).map(flvPacketOf);
}

/** The muxer's output for `packets`: cut after each video keyframe is pushed and every `partMs`. */
export function mux(packets: FlvPacket[], partMs = 300): { init: Buffer; fragments: Fmp4Fragment[] } {
  const m = new Fmp4Muxer();
  const fragments: Fmp4Fragment[] = [];
  let cutAt = -1;
  for (const p of packets) {
    const r = m.push(p);
    if (r.kind === 'new-init') throw new Error('unexpected new init');
    if (cutAt < 0 && r.kind === 'sample') cutAt = p.timestamp + partMs;
    if (p.kind === 'keyframe' || (cutAt >= 0 && p.timestamp >= cutAt)) {
      const f = m.flush();
      if (f) fragments.push(f);
      cutAt = p.timestamp + partMs;
    }
  }
  const last = m.end();
  if (last) fragments.push(last);
  return { init: m.init()!, fragments };
}

export interface ProbedStream { codec_type: string; codec_name: string; nb_read_frames: string; duration?: string; width?: number; sample_rate?: string }

/** ffprobe's streams of a file, frames counted. */
export function probeStreams(file: string): ProbedStream[] {
  const r = spawnSync('ffprobe', ['-v', 'error', '-count_frames', '-show_streams', '-of', 'json', file], { maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`ffprobe failed: ${r.stderr.toString()}`);
  return (JSON.parse(r.stdout.toString()) as { streams: ProbedStream[] }).streams;
}

/** The presentation times (s, 3 decimals) of a file's video keyframes. */
export function keyframeTimes(file: string): string[] {
  const r = spawnSync('ffprobe', ['-v', 'error', '-select_streams', 'v', '-show_entries', 'packet=pts_time,flags', '-of', 'csv=p=0', file], { maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`ffprobe failed: ${r.stderr.toString()}`);
  return r.stdout.toString().split('\n').filter((l) => l.includes('K')).map((l) => Number(l.split(',')[0]).toFixed(3));
}

/** ffmpeg's decode of a file (every stream, to null): its error output ('' when clean) and exit status. */
export function decode(file: string): { status: number | null; errors: string } {
  const r = spawnSync('ffmpeg', ['-v', 'error', '-xerror', '-i', file, '-f', 'null', '-'], { maxBuffer: 64 << 20 });
  return { status: r.status, errors: r.stderr.toString() };
}

/** Writes init + fragments to `file`. */
export function writeMp4(file: string, init: Buffer, fragments: Array<{ data: Buffer }>): string {
  writeFileSync(file, Buffer.concat([init, ...fragments.map((f) => f.data)]));
  return file;
}

/** Each track's decode-time span in a movie fragment, seconds (`timescales` by track id), read from its tfdt and trun. */
export function trackSpans(fragment: Buffer, timescales: Record<number, number>): Map<number, { start: number; end: number }> {
  const out = new Map<number, { start: number; end: number }>();
  for (let at = fragment.indexOf('traf', 0, 'latin1') - 4; at >= 0; at = fragment.indexOf('traf', at + 8, 'latin1') - 4) {
    const id = fragment.readUInt32BE(at + 8 + 12);
    const base = Number(fragment.readBigUInt64BE(at + 8 + 16 + 12));
    const trun = at + 8 + 16 + 20;
    const count = fragment.readUInt32BE(trun + 12);
    const bytes = (fragment.readUInt32BE(trun + 8) & 0x800) !== 0 ? 16 : 12;
    let ticks = 0;
    for (let i = 0; i < count; i++) ticks += fragment.readUInt32BE(trun + 20 + i * bytes);
    const scale = timescales[id]!;
    out.set(id, { start: base / scale, end: (base + ticks) / scale });
    if (fragment.indexOf('traf', at + 8, 'latin1') < 0) break;
  }
  return out;
}
