import { streamName } from '../../sdk/index.ts';
import type { LadderRendition } from './api.ts';
import { laddersErrors } from './errors.ts';
import { MAX_RUNGS, MAX_STREAM_LENGTH, type LadderSettings, type RungView } from './schema.ts';

/*
 * Ladders as written (preset names, custom rungs, a stream or a pattern) turned into what runs:
 * every figure filled and checked, the rungs top first. Pure: the API, the config's validation and
 * the tests share it.
 */

/** A rung with every figure (`height` 0: audio only, or the source's for `copy`). */
export type Rung = RungView;

export type H264Profile = 'baseline' | 'main' | 'high';
const PROFILES: readonly string[] = ['baseline', 'main', 'high'];

/** The named rungs (README "Presets"). */
export const PRESETS: Readonly<Record<string, Rung>> = {
  '1080p': { name: '1080p', height: 1080, video_kbps: 5000, audio_kbps: 128, profile: 'high', copy: false },
  '720p': { name: '720p', height: 720, video_kbps: 2800, audio_kbps: 128, profile: 'main', copy: false },
  '480p': { name: '480p', height: 480, video_kbps: 1400, audio_kbps: 96, profile: 'main', copy: false },
  '360p': { name: '360p', height: 360, video_kbps: 800, audio_kbps: 96, profile: 'main', copy: false },
  '240p': { name: '240p', height: 240, video_kbps: 400, audio_kbps: 64, profile: 'baseline', copy: false },
  audio: { name: 'audio', height: 0, video_kbps: 0, audio_kbps: 128, profile: 'main', copy: false },
  source: { name: 'source', height: 0, video_kbps: 0, audio_kbps: 128, profile: 'main', copy: true },
};

export const DEFAULT_GOP_SECONDS = 2;
const RUNG_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
/** What a stream name of the table may not hold (the RTMP plugin's refusals). */
const BAD_NAME = /[\s\\#\u0000-\u001f\u007f]/;

/** A ladder as it runs. */
export interface Ladder {
  id: string;
  stream?: string;
  pattern?: string;
  rungs: Rung[];
  gop_seconds: number;
  /** 0: the section's `idle_seconds`. */
  idle_seconds: number;
  limits: { cpu_usage: number; memory_mbytes: number; waitfor_seconds: number };
  source: 'config' | 'api';
  /**
   * Who last created or replaced an API ladder (its `request.auth.user`, under an access plugin)
   * and when (unix seconds): the maker of its processes, held to that user's policies as the user
   * that had the name then (`ProcessesService.put`).
   */
  maker?: { user: string; since: number };
}

function int(v: unknown, field: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw laddersErrors.invalid(field, `an integer from ${min} to ${max}`);
  return v;
}

function customRung(r: Record<string, unknown>, field: string): Rung {
  if (typeof r.name !== 'string' || !RUNG_NAME.test(r.name)) throw laddersErrors.invalid(`${field}.name`, 'letters a-z, digits, `_` or `-` (1 to 32), starting with a letter or digit');
  const copy = r.copy === true;
  const audio = r.audio_kbps === undefined ? 128 : r.audio_kbps === 0 ? 0 : int(r.audio_kbps, `${field}.audio_kbps`, 16, 512);
  const height = copy || r.height === undefined || r.height === 0 ? 0 : int(r.height, `${field}.height`, 16, 4320);
  if (copy || height === 0) {
    if (!copy && audio === 0) throw laddersErrors.invalid(field, 'a rung needs a height (video), copy or audio_kbps');
    return { name: r.name, height: 0, video_kbps: 0, audio_kbps: audio, profile: 'main', copy };
  }
  if (r.video_kbps === undefined) throw laddersErrors.invalid(`${field}.video_kbps`, 'needed with a height');
  const rung: Rung = {
    name: r.name, height, video_kbps: int(r.video_kbps, `${field}.video_kbps`, 50, 50_000), audio_kbps: audio, profile: 'main', copy: false,
  };
  if (r.profile !== undefined) {
    if (typeof r.profile !== 'string' || !PROFILES.includes(r.profile)) throw laddersErrors.invalid(`${field}.profile`, 'baseline, main or high');
    rung.profile = r.profile;
  }
  if (r.fps !== undefined) {
    if (typeof r.fps !== 'number' || !(r.fps >= 1 && r.fps <= 120)) throw laddersErrors.invalid(`${field}.fps`, 'a number from 1 to 120');
    rung.fps = r.fps;
  }
  return rung;
}

/** Top first: `copy`, then by height and video bitrate, audio only last (ties keep their order). */
export function byTop(a: Rung, b: Rung): number {
  return Number(b.copy) - Number(a.copy) || b.height - a.height || b.video_kbps - a.video_kbps || b.audio_kbps - a.audio_kbps;
}

/** The rungs as written, resolved and checked, top first. */
export function resolveRungs(input: readonly unknown[], field = 'rungs'): Rung[] {
  if (!Array.isArray(input) || input.length < 1 || input.length > MAX_RUNGS) throw laddersErrors.invalid(field, `1 to ${MAX_RUNGS} rungs`);
  const rungs = input.map((r, i): Rung => {
    const f = `${field}[${i}]`;
    if (typeof r === 'string') {
      const p = Object.hasOwn(PRESETS, r) ? PRESETS[r] : undefined;
      if (!p) throw laddersErrors.unknownPreset(f, r);
      return { ...p };
    }
    if (!r || typeof r !== 'object' || Array.isArray(r)) throw laddersErrors.invalid(f, 'a preset name or a rung object');
    return customRung(r as Record<string, unknown>, f);
  });
  const names = new Set<string>();
  for (const r of rungs) {
    if (names.has(r.name)) throw laddersErrors.invalid(field, `two rungs named '${r.name}'`);
    names.add(r.name);
  }
  if (rungs.filter((r) => r.copy).length > 1) throw laddersErrors.invalid(field, 'one copy rung at most');
  return rungs.sort(byTop);
}

function name(v: string, field: string): string {
  const s = streamName(v.trim());
  if (s === '' || s.length > MAX_STREAM_LENGTH) throw laddersErrors.invalid(field, `1 to ${MAX_STREAM_LENGTH} characters`);
  if (BAD_NAME.test(s) || s.split('/').some((p) => p === '.' || p === '..')) throw laddersErrors.invalid(field, 'no whitespace, control characters, `\\`, `#`, `.` or `..` segments');
  return s;
}

/** A ladder's settings resolved and checked (throws the API's 400 naming the field). */
export function resolveLadder(id: string, s: LadderSettings, source: Ladder['source']): Ladder {
  const hasStream = typeof s.stream === 'string' && s.stream !== '';
  const hasPattern = typeof s.pattern === 'string' && s.pattern !== '';
  if (hasStream === hasPattern) throw laddersErrors.invalid('stream', 'give either stream or pattern');
  const gop = s.gop_seconds ?? DEFAULT_GOP_SECONDS;
  if (typeof gop !== 'number' || !(gop >= 0.5 && gop <= 10)) throw laddersErrors.invalid('gop_seconds', 'a number from 0.5 to 10');
  const l = s.limits ?? {};
  const ladder: Ladder = {
    id, rungs: resolveRungs(s.rungs), gop_seconds: gop, idle_seconds: s.idle_seconds ?? 0, source,
    limits: { cpu_usage: l.cpu_usage ?? 0, memory_mbytes: l.memory_mbytes ?? 0, waitfor_seconds: l.waitfor_seconds ?? 0 },
  };
  if (hasStream) ladder.stream = name(s.stream!, 'stream');
  else ladder.pattern = name(s.pattern!, 'pattern');
  return ladder;
}

/** The kinds of media a ladder's source carries (the stream table's `StreamInfo.media`, once known). */
export interface SourceMedia { video: boolean; audio: boolean }

/**
 * The rungs a source can feed: without audio no audio-only rung, without video no video or copy
 * rung (a video rung's audio is optional in its command). `undefined` media (not known yet): all.
 *
 * @example
 * fitRungs(rungs, { video: true, audio: false }); // the video rungs
 */
export function fitRungs(rungs: readonly Rung[], media: SourceMedia | undefined): Rung[] {
  if (!media) return [...rungs];
  return rungs.filter((r) => (r.copy || r.height > 0 ? media.video : media.audio));
}

/** The renditions of `stream` by `ladder`, top first. */
export function renditionsFor(ladder: Ladder, stream: string): LadderRendition[] {
  return ladder.rungs.map((r) => {
    const v: LadderRendition = {
      name: `${stream}/${r.name}`, rung: r.name, videoBitrate: r.video_kbps * 1000, audioBitrate: r.audio_kbps * 1000, copy: r.copy,
    };
    if (r.height > 0) v.height = r.height;
    if (r.fps !== undefined) v.frameRate = r.fps;
    return v;
  });
}

const RUNG_KEYS = ['name', 'height', 'video_kbps', 'audio_kbps', 'fps', 'profile', 'copy'] as const;
const LADDER_KEYS = ['stream', 'pattern', 'rungs', 'gop_seconds', 'idle_seconds', 'limits'] as const;

/** The settings as written with only the known fields (unknown ones are ignored, and not stored). */
export function knownSettings(s: LadderSettings): LadderSettings {
  const out: Record<string, unknown> = {};
  for (const k of LADDER_KEYS) if (s[k] !== undefined) out[k] = s[k];
  out.rungs = s.rungs.map((r) => {
    if (typeof r === 'string') return r;
    const o: Record<string, unknown> = {};
    for (const k of RUNG_KEYS) if (r[k] !== undefined) o[k] = r[k];
    return o;
  });
  if (s.limits) out.limits = { ...s.limits };
  return out as LadderSettings;
}
