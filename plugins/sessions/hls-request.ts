import type { FsServeRequest } from '../../sdk/fs-hooks.ts';
import type { SessionInfo } from './api.ts';
import { anonymizeIp } from './anonymize.ts';
import { rewritePlaylist } from './playlist.ts';
import { newSessionId } from './session-id.ts';

/*
 * What the HLS taps read from a request, shared by the in-process taps (hls.ts) and the file
 * door's tap module (door-tap.ts). No runtime import from the SDK: the tap module loads this in
 * every serving thread.
 */

/** What `preServe` leaves for the later hooks of a playlist request. */
export type Note = { kind: 'ignored' } | { kind: 'session'; id: string } | { kind: 'new' };
export const IGNORED: Note = { kind: 'ignored' };

/** Segment files (MPEG-TS, fMP4, audio, subtitles): counted for the session in their query. */
export const SEGMENT = /\.(ts|m4s|mp4|aac|m4a|vtt)$/;

/** The path as the client sees it: `/memfs/live/x.m3u8`, or `/live/x.m3u8` on the disk mount. */
export const mountPath = (req: { mount: string; path: string }): string => (req.mount === '/' ? req.path : req.mount + req.path);

/** The file name without its folder and extension: `/live/x.m3u8` -> `x`. */
export const baseName = (p: string): string => p.slice(p.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');

/** The `session` query value, without parsing the whole query on the hot path. */
export function sessionParam(query: string): string | undefined {
  let at = query.startsWith('session=') ? 0 : query.indexOf('&session=') + 1;
  if (at <= 0 && !query.startsWith('session=')) return undefined;
  at += 8;
  const end = query.indexOf('&', at);
  const raw = end < 0 ? query.slice(at) : query.slice(at, end);
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
 * The `transformPlaylist` tap: a master with a fresh id for a new viewer, the session's tags for
 * a known one. A viewer reloads the same playlist version several times per segment: its rewrite
 * is kept per session and reused while the body is the same (a string compare against a rewrite).
 */
export function sessionPlaylists(): (body: string, req: FsServeRequest) => string {
  const rewritten = new Map<string, { body: string; out: string }>();
  return (body, req) => {
    const note = req.note as Note | undefined;
    if (!note || note.kind === 'ignored') return body;
    if (note.kind === 'new') return rewritePlaylist(body, req.path, req.query, undefined, newSessionId);
    const key = `${note.id}${req.path}`;
    const hit = rewritten.get(key);
    // a body that names other playlists gets fresh ids for them on every fetch: never reused
    if (hit?.body === body && !hit.out.includes('.m3u8')) return hit.out;
    const out = rewritePlaylist(body, req.path, req.query, note.id, newSessionId);
    if (rewritten.size >= 10_000) rewritten.clear();
    rewritten.set(key, { body, out });
    return out;
  };
}
