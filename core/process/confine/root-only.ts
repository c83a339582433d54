import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { atOrBeneath } from './paths.ts';

/*
 * What only root may read (issue 43.5): a service running as root starts its children as root
 * without capabilities, but file modes still let uid 0 read what it owns (`/etc/shadow` is root's,
 * mode 0640). So the entries that an ordinary user could not read (a file without the read bit for
 * others, a folder without the search bit for others) are added to what children may not read.
 * Found once, at the first child's start (not the service's: issue 46.4), in the folders where such
 * files live, a few levels deep, with a bound on the entries looked at; a folder on the way to something the service needs (a storage root, its own
 * code, the encoder, the module folder) is opened up instead of hidden.
 */

export const ROOT_ONLY_FOLDERS = ['/etc', '/root', '/home', '/var', '/srv', '/opt', '/boot', '/usr/local/etc'];
const MAX_DEPTH = 4;
// a folder this big is a package database or a cache, not where secrets are kept
const MAX_FOLDER = 1000;
const MAX_ENTRIES = 50_000;

const isOn = (p: string, keep: readonly string[]) => keep.some((k) => atOrBeneath(p, k));

/** Paths beneath `folders` that others may not read, except those on the way to `keep` (absolute, real). */
export function rootOnlyPaths(keep: readonly string[], folders: readonly string[] = ROOT_ONLY_FOLDERS): string[] {
  const out: string[] = [];
  let budget = MAX_ENTRIES;
  const visit = (p: string, depth: number) => {
    if (budget-- <= 0) return;
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    const dir = st.isDirectory();
    if (!dir && !st.isFile()) return;
    const closed = dir ? (st.mode & 0o001) === 0 : (st.mode & 0o004) === 0;
    if (closed && !isOn(p, keep)) {
      out.push(p);
      return;
    }
    if (!dir || depth >= MAX_DEPTH) return;
    let entries;
    try {
      entries = readdirSync(p, { withFileTypes: true });
    } catch {
      return;
    }
    if (entries.length > MAX_FOLDER) return;
    // links are judged where they lead (policy.ts never grants a link itself)
    for (const e of entries) if (e.isDirectory() || e.isFile()) visit(join(p, e.name), depth + 1);
  };
  for (const f of folders) visit(f, 0);
  return out;
}
