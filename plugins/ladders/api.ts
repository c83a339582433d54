import { createServiceRef } from '../../sdk/index.ts';

/*
 * The ladders plugin's contract for other plugins: the renditions an adaptive-bitrate ladder makes
 * of a stream (the LL-HLS plugin's multivariant playlist). Each rendition is a stream of the stream
 * table, published by the ladder's one ffmpeg while it is watched.
 */

/** One rung of a stream's ladder as a stream of the table. */
export interface LadderRendition {
  /** Its table name, e.g. `live/cam/720p`. */
  name: string;
  /** The rung's name, e.g. `720p`, `audio`. */
  rung: string;
  /** Nominal picture size (absent for an audio rung, or a copied top rung). */
  width?: number;
  height?: number;
  /** Nominal bits per second of its video (0 for an audio rung) and audio (0 without audio). */
  videoBitrate: number;
  audioBitrate: number;
  /** Frames per second, when the rung sets them. */
  frameRate?: number;
  /** The source's video, untouched. */
  copy: boolean;
}

/** The ladders service as other plugins see it. */
export interface LaddersService {
  /** The renditions of `stream` (its table name), top rung first; undefined when no ladder applies. */
  renditionsOf(stream: string): readonly LadderRendition[] | undefined;
}

/**
 * The ladders service (provided when `ladders.enable`).
 *
 * @example
 * deps: { ladders: optional(laddersRef) }
 * const rungs = ctx.deps.ladders?.renditionsOf('live/cam') ?? [];
 */
export const laddersRef = createServiceRef<LaddersService>('ladders');
