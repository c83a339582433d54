import { createServiceRef } from '../../sdk/index.ts';

/*
 * The recordings plugin's contract for other plugins: the recorded segments of a stream as HLS
 * playlists whose segment URIs are the files' public URLs on their filesystem's mount (the LL-HLS
 * plugin's DVR playlist). Pure text out; the files are served by the core's file door.
 */

/** Where a recorded playlist starts and ends, and what it is. */
export interface RecordedPlaylistAsk {
  /** Unix ms: segments that end after it (default: the first). */
  from?: number;
  /** Unix ms: segments that start before it (default: the last). */
  to?: number;
  /** `vod`: a fixed range (`EXT-X-PLAYLIST-TYPE:VOD`, ended); `live`: a sliding window, ended once the recording stops. */
  kind: 'vod' | 'live';
}

/** A playlist of recorded segments, or why there is none. */
export type RecordedPlaylist =
  | { ok: true; text: string; segments: number }
  | { ok: false; code: 'RECORDING_NOT_FOUND' | 'RECORDING_NO_MEDIA' | 'RECORDING_NOT_PUBLIC' | 'RECORDING_PLAYLIST_TOO_LONG'; reason: string };

/** The recordings service as other plugins see it. */
export interface RecordingsService {
  /** Names of the recordings of stream `stream` (its table name), recording ones first. */
  ofStream(stream: string): string[];
  /** The HLS playlist of recording `name`'s segments in the asked range. */
  playlist(name: string, ask: RecordedPlaylistAsk): RecordedPlaylist;
}

/**
 * The recordings service (provided when `recordings.enable`).
 *
 * @example
 * deps: { recordings: optional(recordingsRef) }
 * const [name] = ctx.deps.recordings?.ofStream('live/cam') ?? [];
 * const p = name === undefined ? undefined : ctx.deps.recordings!.playlist(name, { kind: 'live', from: Date.now() - 7_200_000 });
 */
export const recordingsRef = createServiceRef<RecordingsService>('recordings');
