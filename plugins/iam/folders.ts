import { compileGlob } from './glob.ts';
import { NO_DOMAIN, type Policy } from './policy.ts';

/*
 * What of the file namespace a user's `fs` policies let its processes' children reach, for the
 * kernel's rules (`httpHooksRef.makerFolders`): each policy's resource walked segment by segment
 * over the folders as they are now (`list`): a literal segment is kept, a segment with a pattern
 * (`ali*`, `[a]lice`, `{alice,bob}`) becomes the existing entries it matches, and `**` the folder
 * it is in (any depth beneath may match). So `/alice/**` is `/alice/`, `/ali*` + `/**` is each
 * folder whose name starts with `ali`, never the root. Never more than a policy can match but for
 * `**` (its whole folder); less where entries come later (a new folder a pattern would match) or
 * a resource cannot match a canonical path (`.`, `..`, `//`, a `{...}` holding a `/`).
 */

const SPECIAL = /[*?[{\\]/;
const WRITES = new Set(['PUT', 'POST', 'DELETE', 'PATCH', '*', 'ANY']);
const READS = new Set(['GET', 'HEAD', '*', 'ANY']);
/** Grants one policy may give at most (entries a pattern matches); beyond, the rest are left out. */
export const MAX_GRANTS = 256;

/** The entries of a namespace folder (`/a/b/`): names, a folder's with its closing `/`; undefined when it cannot be listed. */
export type FolderLister = (folder: string) => readonly string[] | undefined;

const balanced = (s: string) => s.split('{').length === s.split('}').length;

/** The paths (folders end in `/`) a resource glob can reach now, walked over `list`. */
export function grants(resource: string, list: FolderLister, max = MAX_GRANTS): string[] {
  if (!resource.startsWith('/')) return [];
  const segs = resource.slice(1).split('/');
  const out: string[] = [];
  const walk = (base: string, i: number): void => {
    if (out.length >= max) return;
    if (i >= segs.length) {
      out.push(base);
      return;
    }
    const s = segs[i]!;
    const last = i === segs.length - 1;
    if (s === '') {
      if (last) out.push(base);
      return;
    }
    if (s === '.' || s === '..' || !balanced(s)) return;
    if (!SPECIAL.test(s)) {
      if (last) out.push(base + s);
      else walk(`${base}${s}/`, i + 1);
      return;
    }
    if (s.includes('**')) {
      out.push(base);
      return;
    }
    let g: ReturnType<typeof compileGlob>;
    try {
      g = compileGlob(s);
    } catch {
      return;
    }
    for (const e of list(base) ?? []) {
      const dir = e.endsWith('/');
      const name = dir ? e.slice(0, -1) : e;
      if (!g.match(name)) continue;
      if (last) out.push(dir ? `${base}${name}/` : base + name);
      else if (dir) walk(`${base}${name}/`, i + 1);
      if (out.length >= max) return;
    }
  };
  walk('/', 0);
  return out;
}

/** The paths `policies` let read and write (in no domain: `$none`'s, as file decisions are), walked over `list`; added to `into`. */
export function fsFolders(policies: readonly Policy[], list: FolderLister, into: { read: string[]; write: string[] }, readOnly = false): { read: string[]; write: string[] } {
  for (const p of policies) {
    if (!p.types.some((type) => type.toLowerCase() === 'fs')) continue;
    let domain: boolean;
    try {
      domain = compileGlob(p.domain || NO_DOMAIN).match(NO_DOMAIN);
    } catch {
      continue;
    }
    if (!domain) continue;
    const actions = p.actions.map((a) => a.toUpperCase());
    const write = !readOnly && actions.some((a) => WRITES.has(a));
    const read = actions.some((a) => READS.has(a));
    if (!write && !read) continue;
    const paths = grants(p.resource, list);
    if (write) into.write.push(...paths);
    if (read) into.read.push(...paths);
  }
  return into;
}
