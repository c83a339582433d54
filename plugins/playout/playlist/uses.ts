import { posix } from 'node:path';
import type { RunGrant, RunUse } from '../../../sdk/index.ts';
import type { Playlist } from './schema.ts';

/** A source with a scheme (a URL): not a disk item. */
const URL_SOURCE = /^[a-z][a-z0-9+.-]*:/i;

/**
 * What a run's `playlist:<name>` inputs read (its describer, `RunCredentials.describe`): a `GET`
 * of each disk item of the playlist it names as it is now (its path on the disk mount, cleaned as
 * the PUT checked it), so the process's maker must be allowed to read each, at its create and
 * update and again at each start, as for the playlist's own PUT. A playlist that does not exist
 * names nothing (the process does not start: the playout's `preStart` says why).
 */
export function playlistUses(grant: RunGrant, playlist: (name: string) => Playlist | undefined): RunUse[] {
  const out: RunUse[] = [];
  for (const f of grant.fields) {
    if (f.section !== 'input' || !f.text.startsWith('playlist:')) continue;
    for (const item of playlist(f.text.slice('playlist:'.length))?.items ?? []) {
      if (!URL_SOURCE.test(item.source)) out.push({ type: 'fs', resource: posix.normalize(`/${item.source}`), action: 'GET' });
    }
  }
  return out;
}
