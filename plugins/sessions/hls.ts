import type { FsServeHooks, FsServeRequest, FsServeRefusal, FsWrittenEvent, PluginHooks, FilesystemService } from '../../sdk/index.ts';
import { fsServeHooksRef, playlistsOnly } from '../../sdk/index.ts';
import type { Collector } from './collector.ts';
import { validSessionId } from './session-id.ts';
import { sessionRefusals } from './errors.ts';
import { IGNORED, SEGMENT, baseName, mountPath, sessionParam, sessionPlaylists, viewerInfo, type Note } from './hls-request.ts';

/**
 * HLS viewers (`hls`) and uploads (`hlsingress`) through the file-serving hooks (reference
 * 11.6): a playlist fetched without `session` is answered with a one-line master playlist naming
 * a fresh session id; the playlist fetched with that id registers the viewer and gets its segment
 * lines tagged, so every request of one viewer counts for one session however many segments it
 * fetches (MPEG-TS and fMP4 alike). A new viewer over a limit gets 509; known viewers keep playing.
 * In-process taps on main, used when the core has no file door (door-tap.ts does the same in
 * every copy of the door).
 */
export function tapHlsServe(hooks: PluginHooks, hls: Collector, ingress: Collector, onLimit?: (reason: string) => void): void {
  // told once per run of refusals, not for every refused viewer
  let limited = false;

  // playlists only: serving threads answer segments themselves and report them to onServed
  hooks.tap(fsServeHooksRef, 'preServe', playlistsOnly((req: FsServeRequest): FsServeRefusal | undefined => {
    if (!req.path.endsWith('.m3u8')) return undefined;
    if (!hls.collectable(req.remote)) {
      req.note = IGNORED;
      return undefined;
    }
    const id = sessionParam(req.query);
    if (id !== undefined && hls.has(id)) {
      req.note = { kind: 'session', id };
      return undefined;
    }
    if (id !== undefined && !validSessionId(id)) return sessionRefusals.badId();
    const full = hls.admission(ingress.sessionRxBitrate(mountPath(req)));
    if (full) {
      if (!limited) onLimit?.(full);
      limited = true;
      return sessionRefusals.limit(full);
    }
    limited = false;
    if (id === undefined) {
      req.note = { kind: 'new' };
      return undefined;
    }
    hls.register(id, viewerInfo(req));
    req.note = { kind: 'session', id };
    return undefined;
  }));

  hooks.tap(fsServeHooksRef, 'transformPlaylist', sessionPlaylists());

  hooks.tap(fsServeHooksRef, 'onServed', (ev) => {
    const req = ev.request;
    const note = req.note as Note | undefined;
    if (note) {
      if (note.kind === 'session') hls.egress(note.id, ev.bytes);
      return;
    }
    if (!SEGMENT.test(req.path)) return;
    const id = sessionParam(req.query);
    if (id === undefined || !hls.has(id) || !hls.collectable(req.remote)) return;
    hls.activate(id);
    hls.egress(id, ev.bytes);
  });
}

/** HLS uploads (`hlsingress`): a playlist and the segments it lists count for one session. */
export function tapHlsWritten(hooks: PluginHooks, ingress: Collector, filesystems: readonly FilesystemService[]): void {
  const segmentOwner = new Map<string, string>();
  hooks.tap(fsServeHooksRef, 'onWritten', (ev: FsWrittenEvent) => {
    const path = mountPath(ev);
    if (path.endsWith('.m3u8')) {
      if (!ingress.has(path)) {
        ingress.register(path, { reference: baseName(path), location: path, peer: 'unknown', extra: String(ev.headers['user-agent'] ?? '') }, true);
      }
      ingress.ingress(path, ev.bytes);
      learnSegments(filesystems, ev, segmentOwner);
      return;
    }
    const owner = segmentOwner.get(path) ?? guessOwner(path, ingress);
    if (owner) ingress.ingress(owner, ev.bytes);
  });
}

/** Remembers which playlist references which segment, so segment uploads count for their playlist. */
function learnSegments(filesystems: readonly FilesystemService[], ev: FsWrittenEvent, owners: Map<string, string>): void {
  const fs = filesystems.find((f) => f.mount === ev.mount);
  if (!fs) return;
  const playlist = mountPath(ev);
  const dir = playlist.slice(0, playlist.lastIndexOf('/') + 1);
  void fs.readFile(ev.path).then((data) => {
    if (!data) return;
    if (owners.size > 10_000) owners.clear();
    for (const line of data.toString('utf8').split('\n')) {
      const uri = line.trim();
      if (!uri || uri.startsWith('#') || uri.includes('://')) continue;
      const bare = uri.split('?')[0]!;
      owners.set(bare.startsWith('/') ? (ev.mount === '/' ? bare : ev.mount + bare) : dir + bare, playlist);
    }
  }, () => {});
}

/**
 * A segment written before any playlist lists it (ffmpeg writes the segment first): the live
 * playlist of its folder whose name starts its name (`x.m3u8` owns `x_0001.ts`), or the only one.
 */
function guessOwner(segment: string, ingress: Collector): string | undefined {
  const slash = segment.lastIndexOf('/');
  const dir = segment.slice(0, slash + 1);
  const name = segment.slice(slash + 1);
  let only: string | undefined;
  let count = 0;
  for (const id of ingress.activeIds()) {
    if (!id.startsWith(dir) || id.indexOf('/', dir.length) >= 0) continue;
    if (name.startsWith(baseName(id))) return id;
    only = id;
    count++;
  }
  return count === 1 ? only : undefined;
}

/** Viewers and uploads through in-process taps on main (the plugin without the file door). */
export function tapHls(
  hooks: PluginHooks, hls: Collector, ingress: Collector, filesystems: readonly FilesystemService[], onLimit?: (reason: string) => void,
): void {
  tapHlsServe(hooks, hls, ingress, onLimit);
  tapHlsWritten(hooks, ingress, filesystems);
}
