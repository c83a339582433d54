/*
 * The store's answers: a packaged file's node (made once per file: every viewer fetches each part)
 * and a playlist's text as a file of the door.
 */
import { createHash } from 'node:crypto';
import type { FsFile, FsFileInfo, FsNode } from '../../sdk/index.ts';
import type { PackagedFile } from './packager.ts';

const IMMUTABLE = Object.freeze(['cache-control', 'public, max-age=31536000, immutable']);
export const NO_CACHE = Object.freeze(['cache-control', 'no-cache']);
const PLAYLIST = 'application/vnd.apple.mpegurl';

/** A playlist's text as the door serves it. */
export function playlistFile(data: Buffer, etag: string, mtimeMs: number, headers: readonly string[]): FsFile {
  return { data, size: data.length, mtimeMs, etag, mime: PLAYLIST, headers };
}

/** A short content hash for an ETag. */
export const digest = (data: Buffer): string => createHash('sha1').update(data).digest('base64url');

export const info = (name: string, f: PackagedFile): FsFileInfo => ({ name, size_bytes: f.data.length, last_modified: Math.floor(f.mtimeMs / 1000) });

/** Per packaged file, its answer (made once: a part is fetched by every viewer). */
type FileNode = Extract<FsNode, { kind: 'file' }>;
const nodes = new WeakMap<PackagedFile, FileNode>();

const mimeOf = (name: string) => (name.endsWith('.mp4') ? 'video/mp4' : 'video/iso.segment');

export function fileNode(path: string, name: string, f: PackagedFile): FileNode {
  let node = nodes.get(f);
  if (!node) {
    const file: FsFile = { data: f.data, size: f.data.length, mtimeMs: f.mtimeMs, etag: `"${name}"`, mime: mimeOf(name), headers: IMMUTABLE };
    node = { kind: 'file', path, file };
    nodes.set(f, node);
  }
  return node;
}

/** A packaged file read back from the DVR archive (another filesystem): answered as the packager answered it. */
export function archivedNode(path: string, name: string, n: FsNode | undefined): FsNode | undefined {
  return n?.kind === 'file' ? { kind: 'file', path, file: { ...n.file, etag: `"${name}"`, mime: mimeOf(name), headers: IMMUTABLE } } : undefined;
}
