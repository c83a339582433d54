import { dirname, isAbsolute, resolve } from 'node:path';
import { HARMLESS_DEVICES, inside, kernelPath, NETWORK, protocolOf } from './kernel-path.ts';
import { FILE_OPTIONS, RELATIVE_OPTIONS } from './option-table.ts';
import { allowed, type Validator } from './validate.ts';

/*
 * Where an output (or a file-writing option value) can write, as ffmpeg would open it:
 * protocols and muxer prefixes unwrapped, files resolved the way the kernel resolves them.
 * Every function returns the reason it is refused, or undefined.
 */

const MAX_NESTING = 4;

/** Why a network address is not a URL, or undefined. */
export function urlProblem(address: string): string | undefined {
  try {
    new URL(address);
    return undefined;
  } catch {
    return 'invalid URL';
  }
}

/** A file target: the kernel's path must be inside the disk root (symlinks, '..' and /dev/fd followed). */
export function checkFile(v: Validator, path: string): string | undefined {
  const lexical = resolve(path);
  // exact names only: a lexical clean-up could turn '<link>/../dev/null' into one
  if (HARMLESS_DEVICES.has(path)) return allowed(v.output, `file:${path}`) ? undefined : 'address is not allowed';
  const real = kernelPath(path);
  const root = kernelPath(v.diskRoot);
  if (!inside(root, real)) {
    return `${lexical} is not inside of ${v.diskRoot}${real === lexical ? '' : ` (it resolves to ${real})`}`;
  }
  return allowed(v.output, `file:${lexical}`) ? undefined : 'address is not allowed';
}

/** One output target (no tee `|` syntax at this level, except inside `tee:`). */
export function checkTarget(v: Validator, address: string, depth = 0): string | undefined {
  if (depth > MAX_NESTING) return 'protocols nested too deeply';
  if (address === '-') return undefined;
  const p = protocolOf(address);
  if (!p) return checkFile(v, address);
  let name = p.name;
  let rest = p.rest;
  // `crypto+file:x` is crypto over `file:x` (nested scheme)
  const plus = name.indexOf('+');
  if (plus >= 0) {
    rest = `${name.slice(plus + 1)}:${rest}`;
    name = name.slice(0, plus);
    if (name !== 'crypto') return `protocol '${p.name}' is not allowed for outputs`;
  }
  if (NETWORK.has(name)) return urlProblem(address) ?? (allowed(v.output, address) ? undefined : 'address is not allowed');
  switch (name) {
    case 'file':
      return checkFile(v, rest);
    case 'pipe':
      // the reference refuses pipe: as an output (a path outside the root); `-` is the child's stdout
      return `'${address}' is not allowed (use '-' for stdout)`;
    case 'tee':
      for (const part of rest.split('|')) {
        const why = checkTarget(v, part, depth + 1);
        if (why) return why;
      }
      return undefined;
    case 'md5':
      return rest === '' ? undefined : checkTarget(v, rest, depth + 1);
    case 'crypto':
    case 'async':
    case 'cache':
      return checkTarget(v, rest, depth + 1);
    default:
      return `protocol '${name}' is not allowed for outputs`;
  }
}

/** `[k=v:k=v]` of a tee slave: file-writing options inside are outputs too. */
function checkTeeOptions(v: Validator, opts: string, slave: string): string | undefined {
  if (/['"\\]/.test(opts)) return 'quotes and escapes are not allowed in tee options';
  for (const kv of opts.split(':')) {
    const eq = kv.indexOf('=');
    if (eq < 0) continue;
    const key = kv.slice(0, eq);
    const value = kv.slice(eq + 1);
    if (FILE_OPTIONS.has(key)) {
      const why = checkTarget(v, value);
      if (why) return why;
    } else if (RELATIVE_OPTIONS.has(key)) {
      const why = checkRelative(v, value, fileDirOf(slave));
      if (why) return why;
    }
  }
  return undefined;
}

/** The folder of a file output (names like `master_pl_name` are written there), or undefined. */
export function fileDirOf(address: string): string | undefined {
  const p = protocolOf(address);
  if (p && p.name !== 'file') return undefined;
  return dirname(p ? p.rest : address);
}

/** A name ffmpeg joins to the output's folder (`master_pl_name`, `init_seg_name`, ...). */
export function checkRelative(v: Validator, name: string, dir: string | undefined): string | undefined {
  if (isAbsolute(name) || protocolOf(name)) return checkTarget(v, name);
  if (dir !== undefined) return checkFile(v, `${dir}/${name}`);
  return name.split('/').includes('..') ? `'..' is not allowed in ${name}` : undefined;
}

/** A whole output address: tee syntax (`[opts]a|[opts]b`, reference 8.4) split, each part checked. */
export function checkOutputAddress(v: Validator, address: string): string | undefined {
  const tee = address.includes('|') || address.startsWith('[');
  const parts = tee ? address.split('|') : [address];
  for (const raw of parts) {
    const m = tee ? /^\[([^\]]*)\]/.exec(raw) : null;
    const part = m ? raw.slice(m[0].length) : raw;
    const why = (m ? checkTeeOptions(v, m[1]!, part) : undefined) ?? checkTarget(v, part);
    if (why) return why;
  }
  return undefined;
}
