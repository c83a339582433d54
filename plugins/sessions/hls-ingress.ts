import { fsServeHooksRef, type FsWrittenEvent, type PluginHooks, type FilesystemService } from '../../sdk/index.ts';
import type { Collector } from './collector.ts';
import { baseName, mountPath } from './hls.ts';

/** HLS uploads (`hlsingress`), on main where uploads are stored: a playlist and the segments it lists count for one session. */
export function tapHlsWritten(hooks: PluginHooks, ingress: Collector, filesystems: readonly FilesystemService[]): void {
  const segmentOwner = new Map<string, string>();
  hooks.tap(fsServeHooksRef, 'onWritten', (ev: FsWrittenEvent) => {
    const path = mountPath(ev);
    if (path.endsWith('.m3u8')) {
      ingress.register(path, { reference: baseName(path), location: path, peer: 'unknown', extra: String(ev.headers['user-agent'] ?? '') }, true);
      ingress.ingress(path, ev.bytes);
      learnSegments(filesystems, ev, path, segmentOwner);
      return;
    }
    const owner = segmentOwner.get(path) ?? guessOwner(path, ingress);
    if (owner) ingress.ingress(owner, ev.bytes);
  });
}

/** Remembers which playlist references which segment, so segment uploads count for their playlist. */
function learnSegments(filesystems: readonly FilesystemService[], ev: FsWrittenEvent, playlist: string, owners: Map<string, string>): void {
  const fs = filesystems.find((f) => f.mount === ev.mount);
  if (!fs) return;
  const dir = playlist.slice(0, playlist.lastIndexOf('/') + 1);
  void fs.readFile(ev.path).then((data) => {
    if (!data) return;
    if (owners.size > 10_000) owners.clear();
    for (const line of data.toString('utf8').split('\n')) {
      const uri = line.trim();
      if (!uri || uri.startsWith('#') || uri.includes('://')) continue;
      const bare = uri.split('?')[0]!;
      owners.set(bare.startsWith('/') ? mountPath({ mount: ev.mount, path: bare }) : dir + bare, playlist);
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
  for (const id of ingress.ids()) {
    if (!id.startsWith(dir) || id.indexOf('/', dir.length) >= 0) continue;
    if (name.startsWith(baseName(id))) return id;
    only = id;
    count++;
  }
  return count === 1 ? only : undefined;
}
