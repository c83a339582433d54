import type { FsFile, FsFileInfo } from '../../sdk/index.ts';

/** A file: its serving facts (ETag, type, date) are fixed when it is written, never per request. */
export interface MemFileNode {
  kind: 'file';
  path: string;
  file: FsFile;
}

/** A link to another path of the same filesystem. */
export interface MemLinkNode { kind: 'link'; target: string; mtimeMs: number }
export type MemNode = MemFileNode | MemLinkNode;

export const sizeOf = (n: MemNode | undefined) => (n?.kind === 'file' ? n.file.size : 0);

/**
 * What holding an entry costs beyond its bytes, measured (`node --expose-gc`: 20,000 empty files
 * take about 850 bytes of heap each, besides their names): it counts toward `max_size_mbytes`,
 * so many empty files with long names fill memfs like their bytes would.
 */
export const ENTRY_BYTES = 1024;

/** What an entry counts toward the limit: its bytes, `ENTRY_BYTES` and its name (a link's target too). */
export function chargeOf(path: string, n: MemNode | undefined): number {
  if (n === undefined) return 0;
  const names = Buffer.byteLength(path) + (n.kind === 'link' ? Buffer.byteLength(n.target) : 0);
  return sizeOf(n) + ENTRY_BYTES + names;
}

/** A file's node (the door builds its headers once per version, core/door/send.ts). */
export function fileNode(path: string, file: FsFile): MemFileNode {
  return { kind: 'file', path, file };
}

/** The listing entry of a node (links count 0 bytes). */
export function info(name: string, n: MemNode): FsFileInfo {
  const mtimeMs = n.kind === 'file' ? n.file.mtimeMs : n.mtimeMs;
  return { name, size_bytes: sizeOf(n), last_modified: Math.floor(mtimeMs / 1000) };
}

/** Allocates a file's Buffer (plain, or in shared memory for the serving threads). */
export type Alloc = (size: number) => Buffer;

/** The bytes in a Buffer of their own: compact (no pinned socket slab) and safe from the writer. */
export function own(data: Uint8Array | Uint8Array[], size: number, alloc: Alloc = Buffer.allocUnsafeSlow): Buffer {
  const out = alloc(size);
  let at = 0;
  for (const c of Array.isArray(data) ? data : [data]) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
