import { isAbsolute, relative, resolve } from 'node:path';
import { allowed, type Validator } from './validate.ts';

/*
 * Reference 8.4 for output addresses, and nothing more: where a child can really write is the
 * confinement's decision (core/process/confine), which holds whatever ffmpeg's options say.
 * Every function returns the reason an address is refused, or undefined.
 */

const SCHEME = /^[a-z][a-z0-9.+\-:]*:\/{1,3}/i;

/** Why a network address is not a URL, or undefined (the reference's relaxed parser: `%v` is fine). */
export function urlProblem(address: string): string | undefined {
  try {
    new URL(address);
    return undefined;
  } catch {
    return 'invalid URL';
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** One output target: a URL, `-` (stdout), or a file under the disk root or `/dev/`. */
function checkTarget(v: Validator, address: string): string | undefined {
  const a = address.startsWith('file:') ? address.slice('file:'.length) : address;
  if (SCHEME.test(a)) return urlProblem(a) ?? (allowed(v.output, a) ? undefined : 'address is not allowed');
  if (a === '-') return undefined;
  // relative to the service's working directory, cleaned, as the reference does
  const path = resolve(a);
  const ok = path.startsWith('/dev/') || inside(v.diskRoot, path) || v.writable?.some((w) => inside(w, path));
  if (!ok) return `${path} is not inside of ${v.diskRoot}`;
  return allowed(v.output, `file:${path}`) ? undefined : 'address is not allowed';
}

/** A whole output address: tee syntax (`[opts]a|[opts]b`) split, each part without its options checked. */
export function checkOutputAddress(v: Validator, address: string): string | undefined {
  const tee = address.includes('|') || address.startsWith('[');
  for (const raw of tee ? address.split('|') : [address]) {
    const why = checkTarget(v, tee ? raw.replace(/^\[[^\]]*\]/, '') : raw);
    if (why) return why;
  }
  return undefined;
}
