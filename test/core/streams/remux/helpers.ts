// Test helpers for the remuxers: a tiny FLV file reader/writer, ffprobe's packet list, fixtures.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FlvTag } from '../../../../core/streams/remux/index.ts';

export const FIXTURES = fileURLToPath(new URL('../../../fixtures/remux/', import.meta.url));

export function fixture(name: string): Buffer {
  return readFileSync(FIXTURES + name);
}

/** Why ffprobe-based checks are skipped, or false when ffprobe runs. */
export const noFfprobe: string | false = spawnSync('ffprobe', ['-version'], { stdio: 'ignore' }).status === 0
  ? false : 'ffprobe not found on PATH (apt-get install ffmpeg)';

/** The tags of an FLV file (header, then PreviousTagSize0 and tags); stops at a truncated tag. */
export function readFlv(file: Buffer): FlvTag[] {
  if (file.length < 9 || file.toString('latin1', 0, 3) !== 'FLV') throw new Error('not an FLV file');
  const tags: FlvTag[] = [];
  let p = file.readUInt32BE(5) + 4;
  while (p + 11 <= file.length) {
    const type = file[p] & 0x1f;
    const size = file.readUIntBE(p + 1, 3);
    const timestamp = (file.readUIntBE(p + 4, 3) | (file[p + 7] << 24)) >>> 0;
    if (p + 11 + size > file.length) break;
    if (type === 8 || type === 9 || type === 18) tags.push({ type, timestamp, body: file.subarray(p + 11, p + 11 + size) });
    p += 11 + size + 4;
  }
  return tags;
}

/** An FLV file of `tags` (the audio/video flags from which tag types occur). */
export function writeFlv(tags: FlvTag[]): Buffer {
  const audio = tags.some((t) => t.type === 8);
  const video = tags.some((t) => t.type === 9);
  const parts: Buffer[] = [Buffer.from([0x46, 0x4c, 0x56, 1, (audio ? 4 : 0) | (video ? 1 : 0), 0, 0, 0, 9, 0, 0, 0, 0])];
  for (const t of tags) {
    const h = Buffer.alloc(11);
    h[0] = t.type;
    h.writeUIntBE(t.body.length, 1, 3);
    h.writeUIntBE(t.timestamp & 0xffffff, 4, 3);
    h[7] = (t.timestamp >>> 24) & 0xff;
    const size = Buffer.alloc(4);
    size.writeUInt32BE(11 + t.body.length);
    parts.push(h, t.body, size);
  }
  return Buffer.concat(parts);
}

export interface Packet { kind: 'video' | 'audio'; pts: number; dts: number; key: boolean; size: number }

function run(args: string[], input: Buffer): string {
  const r = spawnSync('ffprobe', ['-v', 'error', ...args, '-i', 'pipe:0'], { input, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`ffprobe failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** ffprobe's packets (pts/dts in the stream's time base units, as integers). */
export function probePackets(input: Buffer, format: 'flv' | 'mpegts'): Packet[] {
  const out = run(['-f', format, '-show_entries', 'packet=codec_type,pts,dts,flags,size', '-of', 'json'], input);
  const list = (JSON.parse(out) as { packets: Array<Record<string, string | number>> }).packets;
  return list.map((p) => ({
    kind: p.codec_type === 'video' ? 'video' : 'audio', pts: Number(p.pts), dts: Number(p.dts),
    key: String(p.flags).startsWith('K'), size: Number(p.size),
  }));
}

/** Decoded frames per kind (ffprobe's frame list). */
export function probeFrames(input: Buffer, format: 'flv' | 'mpegts'): { video: number; audio: number } {
  const out = run(['-f', format, '-show_entries', 'frame=media_type', '-of', 'csv=p=0'], input);
  const lines = out.split('\n');
  return { video: lines.filter((l) => l.startsWith('video')).length, audio: lines.filter((l) => l.startsWith('audio')).length };
}

/** A deterministic PRNG (mulberry32) for garbage input. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits ffprobe's packets by kind. */
export function byKind(list: Packet[]): { video: Packet[]; audio: Packet[] } {
  return { video: list.filter((p) => p.kind === 'video'), audio: list.filter((p) => p.kind === 'audio') };
}

export interface TsPacketInfo { pid: number; pusi: boolean; cc: number; hasPayload: boolean; rai: boolean; pcr: boolean }

/** The header fields of every 188-byte packet of a TS buffer (throws when one is not on a sync byte). */
export function tsPackets(ts: Buffer): TsPacketInfo[] {
  const out: TsPacketInfo[] = [];
  for (let p = 0; p < ts.length; p += 188) {
    if (ts[p] !== 0x47) throw new Error(`no sync byte at ${p}`);
    const afc = (ts[p + 3] >> 4) & 3;
    const af = (afc & 2) !== 0 && ts[p + 4] > 0 ? ts[p + 5] : 0;
    out.push({
      pid: ((ts[p + 1] & 0x1f) << 8) | ts[p + 2], pusi: (ts[p + 1] & 0x40) !== 0, cc: ts[p + 3] & 15,
      hasPayload: (afc & 1) !== 0, rai: (af & 0x40) !== 0, pcr: (af & 0x10) !== 0,
    });
  }
  return out;
}

/** Feeds `input` to `push` in chunks of `size` bytes. */
export function chunked<T>(input: Buffer, size: number, push: (b: Buffer) => T[]): T[] {
  const out: T[] = [];
  for (let p = 0; p < input.length; p += size) out.push(...push(input.subarray(p, p + size)));
  return out;
}
