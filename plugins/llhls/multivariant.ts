/*
 * The multivariant playlist of a stream (RFC 8216bis 4.4.6) and the rendition reports of its
 * renditions' media playlists (4.4.5.4): pure text from what the packagers hold. A stream with an
 * adaptive-bitrate ladder (the `ladders` plugin) lists each rung's rendition; one without lists
 * itself, so a player can always open `master.m3u8`.
 */
import type { Fmp4Track } from './fmp4.ts';
import type { Rendition } from './playlist.ts';

/** One `EXT-X-STREAM-INF` of the multivariant playlist. */
export interface Variant {
  /** URI of its media playlist, relative to the multivariant playlist. */
  uri: string;
  /** Peak bits per second of any segment (`BANDWIDTH`). */
  bandwidth: number;
  /** Average bits per second (`AVERAGE-BANDWIDTH`). */
  averageBandwidth: number;
  /** RFC 6381 codec strings of its tracks. */
  codecs: readonly string[];
  width?: number;
  height?: number;
  frameRate?: number;
}

/** What one rendition's segments carry, in bits per second: the peak and the average; undefined without a segment. */
export function bitrates(r: Rendition, sizeOf: (uri: string) => number | undefined): { peak: number; average: number } | undefined {
  let peak = 0;
  let bits = 0;
  let seconds = 0;
  for (const s of r.segments) {
    const size = sizeOf(s.uri);
    if (size === undefined || !(s.duration > 0)) continue;
    peak = Math.max(peak, (size * 8) / s.duration);
    bits += size * 8;
    seconds += s.duration;
  }
  return seconds > 0 ? { peak: Math.ceil(peak), average: Math.ceil(bits / seconds) } : undefined;
}

/**
 * The variant of a rendition: codecs and picture size from its tracks, the bit rates measured on
 * its segments, raised to a nominal rate when one is known (a rung's configured bit rates plus 10%:
 * the first segments of an encoder may undershoot what it will send).
 */
export function variantOf(uri: string, tracks: readonly Fmp4Track[], measured: { peak: number; average: number } | undefined,
  nominal?: { bitrate: number; frameRate?: number }): Variant | undefined {
  if (tracks.length === 0 || (!measured && !nominal?.bitrate)) return undefined;
  const floor = nominal?.bitrate ? Math.ceil(nominal.bitrate * 1.1) : 0;
  const video = tracks.find((t) => t.kind === 'video');
  return {
    uri,
    bandwidth: Math.max(measured?.peak ?? 0, floor),
    averageBandwidth: measured?.average ?? floor,
    codecs: tracks.map((t) => t.codec),
    ...(video?.kind === 'video' ? { width: video.width, height: video.height } : {}),
    ...(nominal?.frameRate ? { frameRate: nominal.frameRate } : {}),
  };
}

/** The multivariant playlist of `variants` (in the given order: the first is where a player starts). */
export function renderMultivariant(variants: readonly Variant[]): string {
  const out = ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const v of variants) {
    let line = `#EXT-X-STREAM-INF:BANDWIDTH=${v.bandwidth},AVERAGE-BANDWIDTH=${v.averageBandwidth},CODECS="${v.codecs.join(',')}"`;
    if (v.width !== undefined && v.height !== undefined) line += `,RESOLUTION=${v.width}x${v.height}`;
    if (v.frameRate !== undefined) line += `,FRAME-RATE=${v.frameRate.toFixed(3)}`;
    out.push(line, v.uri);
  }
  return out.join('\n') + '\n';
}

/**
 * A rendition report of `r` (`EXT-X-RENDITION-REPORT`): its last segment's number and its last
 * part's index in that segment (the one being written when it has parts already).
 */
export function reportOf(uri: string, r: Rendition): string | undefined {
  if (r.ended) return undefined;
  const open = r.open;
  if (open.parts.length > 0) return `#EXT-X-RENDITION-REPORT:URI="${uri}",LAST-MSN=${open.msn},LAST-PART=${open.parts.length - 1}`;
  const last = r.segments.at(-1);
  if (!last) return undefined;
  return `#EXT-X-RENDITION-REPORT:URI="${uri}",LAST-MSN=${last.msn}${last.parts.length > 0 ? `,LAST-PART=${last.parts.length - 1}` : ''}`;
}
