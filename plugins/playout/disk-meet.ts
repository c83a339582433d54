import { realpathSync } from 'node:fs';
import type { ChildSpawnOptions } from '../../sdk/index.ts';

type Disk = ChildSpawnOptions['disk'];

/** A local path without its closing `/` (folders are given with one). */
const bare = (p: string) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p);
const within = (parent: string, p: string) => {
  const a = bare(parent);
  const b = bare(p);
  return b === a || b.startsWith(a === '/' ? '/' : `${a}/`);
};

/** A path as the kernel reaches it (a link on the way resolved, as the children service does), keeping a folder's closing `/`. */
const real = (p: string) => {
  try {
    const r = realpathSync(p);
    return p.endsWith('/') && !r.endsWith('/') ? `${r}/` : r;
  } catch {
    return p;
  }
};

/** The paths both lists reach: each path of one that lies at or beneath a path of the other (compared as real paths). */
function meet(given: readonly string[], other: readonly string[]): string[] {
  const a = given.map(real);
  const b = other.map(real);
  const out = new Set<string>();
  for (const p of a) if (b.some((q) => within(q, p))) out.add(p);
  for (const q of b) if (a.some((p) => within(p, q))) out.add(q);
  return [...out];
}

/**
 * What of the disk folder a child acting for two makers at once reaches (`ChildSpawnOptions.disk`):
 * only what both reach, to read and to write; undefined (all of it) only when both are.
 */
export function meetDisks(a: Disk, b: Disk): Disk {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return { read: meet(a.read, b.read), write: meet(a.write, b.write) };
}
