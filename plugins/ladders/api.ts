import { createServiceRef } from '../../sdk/index.ts';

/*
 * The ladders plugin's contract for other plugins: which renditions a stream of the stream table
 * has (the LL-HLS packager's multivariant playlist). Renditions are streams of the table
 * themselves (`<stream>/<rung>`), published by the ladder's on-demand process once read.
 */

/** One rendition of a stream, as a multivariant playlist lists it. */
export interface LadderRendition {
  /** Its stream table name, e.g. `live/cam/720p`: reading it starts the ladder. */
  name: string;
  /** The rung's name, e.g. `720p`. */
  rung: string;
  /** Width in pixels when known before the stream runs (never: it keeps the source's aspect). */
  width?: number;
  /** Height in pixels at most (a smaller source keeps its own); absent for `copy` and audio-only rungs. */
  height?: number;
  /** Video bits per second (`-b:v`, also its `-maxrate`); 0 for audio only and for `copy` (the source's, unknown). */
  videoBitrate: number;
  /** AAC bits per second; 0 without audio. */
  audioBitrate: number;
  /** Frames per second when the rung sets them (else the source's). */
  frameRate?: number;
  /** The source's video untouched (its keyframes are the source's). */
  copy: boolean;
}

/** The ladders service as other plugins see it. */
export interface LaddersService {
  /**
   * The renditions of `stream` (its table name), top rung first (`copy`, then by height and
   * bitrate, audio only last); undefined when no ladder is for it. A rendition's own name
   * (`live/cam/720p`) has none.
   */
  renditionsOf(stream: string): readonly LadderRendition[] | undefined;
}

/**
 * The ladders service (provided when `ladders.enable`).
 *
 * @example
 * deps: { ladders: optional(laddersRef) }
 * const rungs = ctx.deps.ladders?.renditionsOf('live/cam') ?? [];
 * for (const r of rungs) lines.push(`#EXT-X-STREAM-INF:BANDWIDTH=${r.videoBitrate + r.audioBitrate}`, `../${r.rung}/index.m3u8`);
 */
export const laddersRef = createServiceRef<LaddersService>('ladders');
