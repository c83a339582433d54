import type { FileDoorTapContext, FileDoorTaps } from '../../sdk/file-door.ts';
import type { FsServeRefusal, FsServeRequest, FsServedEvent } from '../../sdk/fs-hooks.ts';
import type { SessionInfo } from '../../sdk/sessions.ts';
import { IgnoreList } from './ignore-list.ts';
import { validSessionId } from './session-id.ts';
import { sessionRefusals } from './errors.ts';
import { IGNORED, SEGMENT, mountPath, sessionParam, sessionPlaylists, viewerInfo, type Note } from './hls-request.ts';

/*
 * The HLS viewer rule (reference 11.6), written once: a file door tap module the core runs next to
 * every copy of the door, main's and each serving thread's. A playlist fetched without `session`
 * is answered with a one-line master naming a fresh session id; the playlist fetched with that id
 * admits the viewer (or refuses it with 509 over a limit) and gets its segment lines tagged, so
 * every request of one viewer counts for one session however many segments it fetches. A copy
 * decides alone, from the door's shared counter and recent ids and from what the plugin's main
 * side broadcasts (hls-viewers.ts); it reports viewers and bytes, which main counts.
 * Imports SDK files one by one: this module is loaded in every thread.
 */

export const NUMBER_EXCEEDED = 'Number of sessions exceeded';
export const BITRATE_EXCEEDED = 'Bitrate limit exceeded';

/** The module's init: `sessions.ip_ignorelist`. */
export interface HlsInit {
  ignore: readonly string[];
}

/** A copy's report items: a viewer it admitted (sent at once), a run of refusals it started, its start. */
export type HlsItem = ({ t: 'viewer'; id: string } & Required<SessionInfo>) | { t: 'limit'; reason: string } | { t: 'hello' };

/**
 * Main's broadcasts. `known`: session ids main registered (`add`) or closed (`drop`); `full`: the
 * playlists (mount paths) whose upload rate puts a new viewer over `max_bitrate_mbit`, the whole
 * list each time it changes. The egress alone over it blocks the door's counter (every copy at once).
 */
export type HlsNews = { t: 'known'; add: string[]; drop: string[] } | { t: 'full'; locations: string[] };

/** Report sums are bytes per session: `p<id>` of its playlists, `s<id>` of its segments (a segment activates it). */
export const PLAYLIST_BYTES = 'p';
export const SEGMENT_BYTES = 's';

/** The taps of one copy. */
export default function hlsViewers(ctx: FileDoorTapContext): FileDoorTaps {
  const ignore = new IgnoreList((ctx.init as HlsInit).ignore);
  const { counter, recent } = ctx;
  // the sessions main holds, as far as this copy heard, and the ones it registered itself
  const known = new Set<string>();
  let full: ReadonlySet<string> = new Set();
  ctx.onMessage((raw) => {
    const m = raw as HlsNews;
    if (m.t === 'known') {
      for (const id of m.add) known.add(id);
      for (const id of m.drop) known.delete(id);
    } else {
      full = new Set(m.locations);
    }
  });
  ctx.report({ t: 'hello' } satisfies HlsItem, true);

  const preServe = (req: FsServeRequest): FsServeRefusal | undefined => {
    if (!req.path.endsWith('.m3u8')) return undefined;
    if (!ignore.collectable(req.remote)) {
      req.note = IGNORED;
      return undefined;
    }
    const id = sessionParam(req.query);
    // a viewer another copy registered a moment ago (main's `known` may still be on its way)
    if (id !== undefined && (known.has(id) || (validSessionId(id) && recent.has(id)))) {
      req.note = { kind: 'session', id } satisfies Note;
      return undefined;
    }
    if (id !== undefined && !validSessionId(id)) return sessionRefusals.badId();
    const why = counter.full() ? NUMBER_EXCEEDED
      : counter.blocked() || full.has(mountPath(req)) ? BITRATE_EXCEEDED
        : id !== undefined && !counter.reserve() ? NUMBER_EXCEEDED : undefined;
    if (why !== undefined) {
      if (counter.refused()) ctx.report({ t: 'limit', reason: why } satisfies HlsItem);
      return sessionRefusals.limit(why);
    }
    counter.admitted();
    if (id === undefined) {
      req.note = { kind: 'new' } satisfies Note;
      return undefined;
    }
    known.add(id);
    recent.add(id);
    // at once: the other copies learn the id from main as soon as possible
    ctx.report({ t: 'viewer', id, ...viewerInfo(req) } satisfies HlsItem, true);
    req.note = { kind: 'session', id } satisfies Note;
    return undefined;
  };

  const onServed = (ev: FsServedEvent): void => {
    const req = ev.request;
    const note = req.note as Note | undefined;
    if (note) {
      if (note.kind === 'session') ctx.add(PLAYLIST_BYTES + note.id, ev.bytes);
      return;
    }
    if (!SEGMENT.test(req.path)) return;
    const id = sessionParam(req.query);
    // an id this copy has not heard of may be one another copy registered a moment ago: main
    // knows (or drops the bytes); anything that cannot be an id is not sent
    if (id === undefined || (!known.has(id) && !validSessionId(id)) || !ignore.collectable(req.remote)) return;
    ctx.add(SEGMENT_BYTES + id, ev.bytes);
  };

  return { preServe, transformPlaylist: sessionPlaylists(), onServed };
}
