import { compileGlob } from './glob.ts';
import { NO_DOMAIN, type Policy } from './policy.ts';

/*
 * What of the file namespace a user's `fs` policies let its processes' children reach, for the
 * kernel's rules (`httpHooksRef.makerFolders`): the literal part of each policy's resource before
 * its first special character, as a folder (`/alice/**` is `/alice/`; `/alice*` is `/`) or, for a
 * resource with none, the file itself. Over-granted where a glob narrows within a folder: the
 * command's own uses are asked of the policies too (makers.ts); under-granted never.
 */

const SPECIAL = /[*?[{\\]/;
const WRITES = new Set(['PUT', 'POST', 'DELETE', 'PATCH', '*', 'ANY']);
const READS = new Set(['GET', 'HEAD', '*', 'ANY']);

/** The literal folder (ending in `/`) a resource glob lies in, or the resource itself when it has no special character. */
export function literalBase(resource: string): string {
  const i = resource.search(SPECIAL);
  if (i < 0) return resource;
  const cut = resource.lastIndexOf('/', i);
  return cut < 0 ? '/' : resource.slice(0, cut + 1);
}

/** The folders (and files) `policies` let read and write, in no domain (`$none`'s, as file decisions are); added to `into`. */
export function fsFolders(policies: readonly Policy[], into: { read: string[]; write: string[] }, readOnly = false): { read: string[]; write: string[] } {
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
    const base = literalBase(p.resource);
    if (!readOnly && actions.some((a) => WRITES.has(a))) into.write.push(base);
    if (actions.some((a) => READS.has(a))) into.read.push(base);
  }
  return into;
}
