import { createServiceRef } from '../../sdk/index.ts';

/*
 * The playout plugin's contract for other plugins (GraphQL `playoutStatus`, `playlistState`).
 * Playout: inputs written `playout:<url>` are read through a relay owned by the `playout` plugin,
 * which keeps the process's input continuous (an error frame while the source is gone). The REST
 * routes under /api/v3/process/{id}/playout/{inputid}/ and GraphQL `playoutStatus` are thin
 * serialisers over this service (reference 4.5, 5.9, 14).
 */

/** One side of a relay (what it reads, what it sends), reference 5.9. */
export interface PlayoutStatusIO {
  state: 'running' | 'idle';
  packet: number;
  /** Seconds of media passed. */
  time: number;
  size_kb: number;
}

/** The last stream switch (`PUT .../stream`), reference 5.9. */
export interface PlayoutStatusSwap {
  url: string;
  status: string;
  lasturl: string;
  lasterror: string;
}

/** The status of one relay, in the API's field names (reference 5.9 `PlayoutStatus`). */
export interface PlayoutStatus {
  /** The input's address as configured (`playout:...`). */
  id: string;
  /** The source URL now read. */
  url: string;
  stream: number;
  queue: number;
  aqueue: number;
  dup: number;
  drop: number;
  enc: number;
  looping: boolean;
  duplicating: boolean;
  gop: string;
  debug: unknown;
  input: PlayoutStatusIO;
  output: PlayoutStatusIO;
  swap: PlayoutStatusSwap;
}

/**
 * The relays of running processes. Every method throws an `ApiError` with status 404 ("Unknown
 * process or input") when the process has no playout for that input, and other `ApiError`s with the
 * documented statuses; callers serialise them (REST Error body, GraphQL error).
 *
 * @example
 * deps: { playout: optional(playoutRef) }
 * // in a resolver: ctx.deps.playout?.status(id, input) ?? throw new Error('playout is not loaded')
 */
export interface PlayoutService {
  status(processId: string, inputId: string): Promise<PlayoutStatus>;
  /** Where a `playlist:` input of a running process is; null otherwise (never throws). */
  playlist?(processId: string, inputId: string): PlaylistPlayState | null;
}

/**
 * Where the `playout` plugin provides its service (one provider, absent when the plugin is not loaded).
 *
 * @example
 * deps: { playout: optional(playoutRef) }
 */
export const playoutRef = createServiceRef<PlayoutService>('playout');

/** Where a process plays a `playlist:<name>` input (process state `playlist`, GraphQL). */
export interface PlaylistPlayState {
  /** The playlist's name. */
  name: string;
  /** Index of the current item in the playlist, -1 between items. */
  index: number;
  /** The current item's source, null between items. */
  current: string | null;
  /** Seconds into the current item (counted from its `in`). */
  position: number;
  /** The next item's source, null at the end of a playlist without loop. */
  next: string | null;
  /** Items started and items skipped since the relay started. */
  played: number;
  skipped: number;
}
