import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type Resolved = { url: string; shortCircuit?: boolean };
type Context = { conditions?: readonly string[] };
/** Node 23.5+ (the pinned 24 has it; the typings of this repository predate it): synchronous hooks of this thread. */
interface HooksApi {
  registerHooks?: (hooks: { resolve: (specifier: string, context: Context, next: (specifier: string, context: Context) => Resolved) => Resolved }) => unknown;
}
/** A packed entry: its ES module (for import) and its CommonJS module (for require). */
interface Entry { esm: string; cjs: string; name: string }
interface Manifest { name?: unknown; version?: unknown; entries?: Record<string, { n: string; files: string[] }> }

let packed: string[] = [];

/**
 * The packed entries under `packRoot` (a folder per package with its `manifest.json`, written by
 * scripts/pack-cjs.mjs), by the URL of each installed file they stand for: a pack whose version is
 * not the one installed under `root` (the package changed and no build ran since) or that cannot be
 * read is left out.
 */
export function packedUrls(root: string, packRoot: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  let dirs: string[];
  try { dirs = readdirSync(packRoot); } catch { return out; }
  for (const d of dirs) {
    try {
      const dir = join(packRoot, d);
      const m = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest;
      if (typeof m.name !== 'string' || !m.entries) continue;
      // the runtime resolves to real paths (a linked node_modules too)
      const pkg = realpathSync(join(root, 'node_modules', m.name));
      const installed = (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version?: unknown }).version;
      if (m.version !== installed) continue;
      for (const { n, files } of Object.values(m.entries)) {
        const e = { esm: pathToFileURL(join(dir, `${n}.mjs`)).href, cjs: pathToFileURL(join(dir, `${n}.cjs`)).href, name: m.name };
        for (const f of files) out.set(pathToFileURL(join(pkg, f)).href, e);
      }
    } catch { /* no pack: the package loads as installed */ }
  }
  return out;
}

/**
 * Points this thread's imports and requires that resolve to a packed entry at its pack (issue
 * 46.4: @sinclair/typebox's 247 modules cost ~100 ms of a start, its pack 20-30): every importer,
 * the service's and a vendor plugin's alike, gets the one copy (its format registry included).
 * Call it before the service's modules load. Nothing changes where the runtime has no hooks or
 * nothing is packed. The packs sit with the installation, as the compile cache does (children
 * cannot write there; the build writes them).
 */
export function usePacks(root: string, packRoot: string): void {
  const urls = packedUrls(root, packRoot);
  const api = nodeModule as unknown as HooksApi;
  if (urls.size === 0 || typeof api.registerHooks !== 'function') return;
  api.registerHooks({
    resolve: (specifier, context, next) => {
      // only what would load the installed entry: a package's own nested copy stays its own
      const r = next(specifier, context);
      const e = urls.get(r.url);
      return e === undefined ? r : { url: context.conditions?.includes('require') ? e.cjs : e.esm, shortCircuit: true };
    },
  });
  packed = [...new Set([...urls.values()].map((e) => e.name))];
}

/** The packages this process loads from packs. */
export function packedPackages(): readonly string[] {
  return packed;
}
