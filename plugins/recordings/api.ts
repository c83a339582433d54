import { createServiceRef, type FilesystemService } from '../../sdk/index.ts';

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

/** A recording's segments as the DVR playlist numbers them (`RecordingsService.entries`). */
export interface RecordedEntries {
  /** Every indexed segment, oldest first: number, start (unix ms), seconds, a gap before it (not for the first). */
  list: { msn: number; start: number; duration: number; discontinuity: boolean }[];
  /** Gaps counted with segments removed from the index. */
  discBefore: number;
  /** The recorder still records. */
  recording: boolean;
}

/** Where a recording keeps files beside its segments (the DVR archive): its filesystem and a folder of its own. */
export interface RecordingSideFolder {
  fs: FilesystemService;
  /** `<prefix>/<name>/<what>` */
  dir: string;
}

/** The recordings service as other plugins see it. */
export interface RecordingsService {
  /** Names of the recordings of stream `stream` (its table name), recording ones first. */
  ofStream(stream: string): string[];
  /** The HLS playlist of recording `name`'s segments in the asked range. */
  playlist(name: string, ask: RecordedPlaylistAsk): RecordedPlaylist;
  /** Recording `name`'s segments by number; undefined when unknown or its filesystem is not public. */
  entries(name: string): RecordedEntries | undefined;
  /** The bytes of recording `name`'s segment that starts at `start` (unix ms); undefined when there is none. */
  readSegment(name: string, start: number): Promise<Buffer | undefined>;
  /** A folder of recording `name` for `what` (a plain name) on its filesystem; undefined when unknown. */
  sideFolder(name: string, what: string): RecordingSideFolder | undefined;
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
