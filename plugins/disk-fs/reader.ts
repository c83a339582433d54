import type { FsNode, FsReader, FsReaderFactory } from '../../sdk/fs.ts';
import { fsExtension } from '../../sdk/fs-path.ts';
import { openDiskNode } from './open.ts';
import { DiskRoot } from './root.ts';

/** What the reader gets: the same root and rules as the filesystem on main. */
export interface DiskReaderInit {
  dir: string;
  real: string;
  reserved: readonly string[];
}

/**
 * The disk opened from another thread (the core's serving threads, `FilesystemService.reader`):
 * files only, with the same rules as main (hidden files, symlinks out of the root). Folders,
 * links, playlists (main rewrites their disk paths) and anything refused are main's to answer.
 */
const diskReader: FsReaderFactory = (init: unknown): FsReader => {
  const i = init as DiskReaderInit;
  const root = new DiskRoot(i.dir, i.real, [...i.reserved]);
  return {
    async open(path: string): Promise<FsNode | undefined> {
      if (fsExtension(path) === '.m3u8') return undefined;
      const node = await openDiskNode(root, path);
      return node?.kind === 'file' ? node : undefined;
    },
  };
};

export default diskReader;
