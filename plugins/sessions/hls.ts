import type { FileDoorTapContext, FileDoorTaps } from '../../sdk/file-door.ts';
import type { FsServeRefusal, FsServeRequest, FsServedEvent } from '../../sdk/fs-hooks.ts';
import type { SessionInfo } from './api.ts';
import { collectableBy } from './ignore-list.ts';
import { isShortId, shortId } from '../../sdk/short-id.ts';
import { sessionRefusals } from './errors.ts';
import { anonymizeIp } from './anonymize.ts';
import { rewritePlaylist, SEGMENT } from './playlist.ts';

/*
 * The HLS viewer rule (reference 11.6; README "HLS viewers on every copy"), a file door tap module
 * the core runs next to every copy of the door. Imports SDK files one by one: threads load it.
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
 * Main's broadcasts: `known`, session ids main registered (`add`) or closed (`drop`); `full`, every
 * playlist (mount path) whose upload rate puts a new viewer over `max_bitrate_mbit`, on each change.
 */
export type HlsNews = { t: 'known'; add: string[]; drop: string[] } | { t: 'full'; locations: string[] };

/** Report sums are bytes per session: `p<id>` of its playlists, `s<id>` of its segments (a segment activates it). */
export const PLAYLIST_BYTES = 'p';
export const SEGMENT_BYTES = 's';

/** The taps of one copy. */
export default function hlsViewers(ctx: FileDoorTapContext): FileDoorTaps {
  const collectable = collectableBy((ctx.init as HlsInit).ignore);
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
    if (!req.path.endsWith('.m3u8') || !collectable(req.remote)) return undefined;
    const id = sessionParam(req.query);
    // a viewer another copy registered a moment ago (main's `known` may still be on its way)
    if (id !== undefined && (known.has(id) || (isShortId(id) && recent.has(id)))) {
      req.note = { kind: 'session', id } satisfies Note;
      return undefined;
    }
    if (id !== undefined && !isShortId(id)) return sessionRefusals.badId();
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
    if (id === undefined || (!known.has(id) && !isShortId(id)) || !collectable(req.remote)) return;
    ctx.add(SEGMENT_BYTES + id, ev.bytes);
  };

  return { preServe, transformPlaylist: sessionPlaylists(), onServed };
}

/** What `preServe` leaves for the later hooks of a counted playlist request. */
type Note = { kind: 'session'; id: string } | { kind: 'new' };

/** The path as the client sees it: `/memfs/live/x.m3u8`, or `/live/x.m3u8` on the disk mount. */
export const mountPath = (req: { mount: string; path: string }): string => (req.mount === '/' ? req.path : req.mount + req.path);

/** The file name without its folder and extension: `/live/x.m3u8` -> `x`. */
export const baseName = (p: string): string => p.slice(p.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');

/** The `session` query value, without parsing the whole query on the hot path. */
export function sessionParam(query: string): string | undefined {
  const at = query.startsWith('session=') ? 8 : query.indexOf('&session=') + 9;
  if (at === 8 && !query.startsWith('session=')) return undefined;
  const end = query.indexOf('&', at);
  const raw = query.slice(at, end < 0 ? undefined : end);
  // ids are plain base57; anything escaped goes through the full parser (and fails the id check)
  return raw.includes('%') || raw.includes('+') ? new URLSearchParams(query).get('session') ?? undefined : raw;
}

/**
 * What a new viewer's session records (reference 12.1): reference = playlist name, location =
 * request path, peer = `Referer` host, extra = `[<IP /24 or /64>] <User-Agent>`.
 */
export function viewerInfo(req: FsServeRequest): Required<SessionInfo> {
  const referer = req.headers.referer;
  let peer = 'unknown';
  try { if (referer) peer = new URL(referer).host || 'unknown'; } catch { /* not a URL: unknown */ }
  return {
    reference: baseName(req.path), location: mountPath(req), peer,
    extra: `[${anonymizeIp(req.remote)}] ${req.headers['user-agent'] ?? ''}`,
  };
}

/**
 * The `transformPlaylist` tap. A viewer reloads one playlist version several times per segment:
 * its rewrite is kept per session and reused while the body is the same.
 */
export function sessionPlaylists(): (body: string, req: FsServeRequest) => string {
  const rewritten = new Map<string, { body: string; out: string }>();
  return (body, req) => {
    const note = req.note as Note | undefined;
    if (!note) return body;
    if (note.kind === 'new') return rewritePlaylist(body, req.path, req.query, undefined, shortId);
    const key = `${note.id}${req.path}`;
    const hit = rewritten.get(key);
    // a body that names other playlists gets fresh ids for them on every fetch: never reused
    if (hit?.body === body && !hit.out.includes('.m3u8')) return hit.out;
    const out = rewritePlaylist(body, req.path, req.query, note.id, shortId);
    if (rewritten.size >= 10_000) rewritten.clear();
    rewritten.set(key, { body, out });
    return out;
  };
}
