import { posix } from 'node:path';
import type { RunGrant, RunUse } from '../../../sdk/index.ts';
import type { Playlist } from './schema.ts';

/** A source with a scheme (a URL): not a disk item. */
const URL_SOURCE = /^[a-z][a-z0-9+.-]*:/i;

/** A disk item's path as the policies name it (`/a/x.mp4`, cleaned), or undefined for a URL item. */
export const diskItemPath = (source: string): string | undefined => (URL_SOURCE.test(source) ? undefined : posix.normalize(`/${source}`));

/**
 * What a run's `playlist:<name>` inputs read (its describer, `RunCredentials.describe`): a `GET`
 * of each disk item of the playlist it names as it is now (its path on the disk mount, cleaned as
 * the PUT checked it) and of each file it leads ffmpeg to now (`leads`: the names of an item that is
 * an HLS playlist, as `local-file.ts` reads them), so the process's maker must be allowed to read
 * each, at its create and update and again at each start, as for the playlist's own PUT. A playlist that does not exist
 * names nothing (the process does not start: the playout's `preStart` says why).
 */
export function playlistUses(grant: RunGrant, playlist: (name: string) => Playlist | undefined, leads: (source: string) => readonly string[] = () => []): RunUse[] {
  const out: RunUse[] = [];
  for (const f of grant.fields) {
    if (f.section !== 'input' || !f.text.startsWith('playlist:')) continue;
    for (const item of playlist(f.text.slice('playlist:'.length))?.items ?? []) {
      const path = diskItemPath(item.source);
      if (path === undefined) continue;
      out.push({ type: 'fs', resource: path, action: 'GET' });
      for (const led of leads(item.source)) out.push({ type: 'fs', resource: led, action: 'GET' });
    }
  }
  return out;
}
