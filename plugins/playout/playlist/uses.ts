import { posix } from 'node:path';
import { cleanFsPath, type RunGrant, type RunUse } from '../../../sdk/index.ts';
import type { Playlist } from './schema.ts';

/** A source with a scheme (a URL): not a disk item. */
const URL_SOURCE = /^[a-z][a-z0-9+.-]*:/i;

/**
 * A disk item's path as the policies name it and as the item is read (`/a/x.mp4`: cleaned with
 * the disk-fs rules, as `sources.ts` locates it: no `.` segments, no trailing slash), or undefined
 * for a URL item. A path those rules refuse is checked as normalised (it is refused when played).
 */
export function diskItemPath(source: string): string | undefined {
  if (URL_SOURCE.test(source)) return undefined;
  const rooted = source.startsWith('/') ? source : `/${source}`;
  try {
    return cleanFsPath(rooted, false);
  } catch {
    return posix.normalize(rooted);
  }
}

/**
 * What a run's `playlist:<name>` inputs read (its describer, `RunCredentials.describe`): a `GET`
 * of each disk item of the playlist it names as it is now, so the process's maker must be allowed
 * to read each, at its create and update and again at each start, as for the playlist's own PUT.
 * The files an item that is an HLS playlist names are asked at each item start (`feed.ts`), not
 * here: walking every item's playlists at each start would read up to GBs synchronously. A
 * playlist that does not exist names nothing (the process does not start: the playout's
 * `preStart` says why).
 */
export function playlistUses(grant: RunGrant, playlist: (name: string) => Playlist | undefined): RunUse[] {
  const out: RunUse[] = [];
  for (const f of grant.fields) {
    if (f.section !== 'input' || !f.text.startsWith('playlist:')) continue;
    for (const item of playlist(f.text.slice('playlist:'.length))?.items ?? []) {
      const path = diskItemPath(item.source);
      if (path !== undefined) out.push({ type: 'fs', resource: path, action: 'GET' });
    }
  }
  return out;
}
