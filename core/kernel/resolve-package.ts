import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a plugin package says about itself: where its code is and which SDK it wants. */
export interface PluginPackage {
  /** file: URL of the package's main entry (its `exports["."]`, else `main`, else index.js). */
  url: string;
  /** Folder of the package (real path, symlinks resolved). */
  dir: string;
  name: string;
  version: string;
  /** The SDK range from `peerDependencies` (else `dependencies`), as written. */
  sdkRange?: string;
}

type Exports = string | null | Exports[] | { [k: string]: Exports };
const CONDITIONS = ['import', 'node', 'module-sync', 'default'];

/** The target of an `exports` value for an ESM import under Node. */
function pickTarget(exp: Exports | undefined): string | undefined {
  if (typeof exp === 'string') return exp;
  if (!exp) return undefined;
  if (Array.isArray(exp)) {
    for (const e of exp) { const t = pickTarget(e); if (t) return t; }
    return undefined;
  }
  if (Object.keys(exp).some((k) => k.startsWith('.'))) return pickTarget(exp['.']);
  for (const c of CONDITIONS) if (c in exp) { const t = pickTarget(exp[c]); if (t) return t; }
  return undefined;
}

/** Node's lookup: `<dir>/node_modules/<name>` from `base` up to the root. */
function packageJsonFrom(base: string, name: string): string | undefined {
  for (let dir = resolve(base); ; dir = dirname(dir)) {
    const pj = join(dir, 'node_modules', name, 'package.json');
    if (existsSync(pj)) return pj;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Finds the package `name` from each folder of `bases` in turn (Node's node_modules walk
 * upwards from there); undefined when none has it. Symlinks (workspaces, `file:` deps) are
 * followed, so a linked package's TypeScript runs from its real folder.
 */
export function findPluginPackage(name: string, bases: readonly string[], sdkName: string): PluginPackage | undefined {
  for (const base of bases) {
    const pj = packageJsonFrom(base, name);
    if (!pj) continue;
    const dir = realpathSync(dirname(pj));
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
      name?: string; version?: string; main?: string; exports?: Exports;
      peerDependencies?: Record<string, string>; dependencies?: Record<string, string>;
    };
    const target = pickTarget(pkg.exports) ?? pkg.main ?? 'index.js';
    return {
      url: pathToFileURL(resolve(dir, target)).href,
      dir,
      name: pkg.name ?? name,
      version: pkg.version ?? '0.0.0',
      sdkRange: pkg.peerDependencies?.[sdkName] ?? pkg.dependencies?.[sdkName],
    };
  }
  return undefined;
}
