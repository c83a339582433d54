import { realpathSync } from 'node:fs';
import { relative, resolve, isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BootError, SDK_VERSION, type PluginDefinition, type PluginEntry } from '../../sdk/index.ts';
import { currentBuild } from '../config/build.ts';
import type { LoadedPlugin } from '../config/plugin-entries.ts';
import { findPluginPackage } from './resolve-package.ts';
import { satisfies } from './semver-range.ts';

/** The SDK's package name: a plugin package's `peerDependencies` entry on it carries its range. */
export const SDK_NAME = '@media-core/sdk';

export { pluginCode, withEntrySettings, vendorConfigErrors, vendorConfig, type LoadedPlugin } from '../config/plugin-entries.ts';

/** The service's own folder: its node_modules is the last place a plugin package is looked for. */
const SERVICE_DIR = fileURLToPath(new URL('../../', import.meta.url));

/** Imports a located plugin module; a boot may pass its own (a test counts the calls). */
export type ModuleImporter = (url: string) => Promise<unknown>;
const importModule: ModuleImporter = (url) => import(url);

/** Built-in plugins of the installed build (core/config/build.ts; this service's: app/build.ts), in mount order. */
export function availableBuiltins(): string[] {
  return currentBuild().builtIns.map((b) => b.def.name);
}

/** What `"*"` expands to: every built-in of this build except the opt-in ones. */
export function starBuiltins(): string[] {
  return currentBuild().builtIns.filter((b) => !b.optIn).map((b) => b.def.name);
}

function isModulePath(s: string): boolean {
  return s.startsWith('.') || s.startsWith('/') || s.endsWith('.ts') || s.endsWith('.js') || s.endsWith('.mjs');
}

/** Where a `plugins` entry's code is, and the SDK range its package declares; a built-in's definition is part of the build. */
interface Located { url: string; sdkRange?: string; from: string; /** The file of a path or package entry (not of a built-in). */ file?: string; builtin?: PluginDefinition }

/**
 * Finds an entry's module: a built-in by name, a path (relative to the config file's folder), or
 * a package (from the config file's folder, then from the service's own node_modules).
 */
function locate(name: string, index: number, baseDir: string): Located {
  if (isModulePath(name)) {
    const file = resolve(baseDir, name);
    return { url: pathToFileURL(file).href, from: file, file };
  }
  const builtin = currentBuild().builtIns.find((b) => b.def.name === name)?.def;
  if (builtin) return { url: '', from: `built-in '${name}'`, builtin };
  const pkg = findPluginPackage(name, [baseDir, SERVICE_DIR], SDK_NAME);
  if (pkg) return { url: pkg.url, sdkRange: pkg.sdkRange, from: `package ${pkg.name}@${pkg.version} (${pkg.dir})`, file: pkg.dir };
  throw new BootError(
    `Unknown plugin '${name}' in 'plugins[${index}]'; known plugins: ${availableBuiltins().join(', ') || '(none)'}, a package name or a module path ` +
    `(no package '${name}' in ${baseDir} or the service's node_modules)`,
    { code: 'PLUGIN_NOT_FOUND' });
}

async function importDefinition(name: string, where: Located, load: ModuleImporter): Promise<PluginDefinition> {
  try {
    const mod = (await load(where.url)) as { default?: PluginDefinition; plugin?: PluginDefinition };
    return mod.default ?? mod.plugin!;
  } catch (err) {
    throw new BootError(`Plugin '${name}' could not be loaded from ${where.from}: ${(err as Error).message}`, { cause: err, code: 'PLUGIN_LOAD' });
  }
}

function real(p: string): string {
  try { return realpathSync(p); } catch { return resolve(p); }
}

/**
 * A module the API could have written (the disk root, the state folder) never loads: code runs only
 * from what the operator put on the machine.
 */
function refuseWritable(where: Located, index: number, forbidden: readonly string[]): void {
  if (!where.file) return;
  const file = real(where.file);
  for (const dir of forbidden.map(real)) {
    const rel = relative(dir, file);
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) {
      throw new BootError(`Plugin 'plugins[${index}]' (${where.from}) lies in ${dir}, a folder the API can write: move it elsewhere (code is loaded only from what the operator installed)`,
        { code: 'PLUGIN_PATH_WRITABLE' });
    }
  }
}

/** The SDK range a plugin declares (definition first, then its package), checked against this SDK. */
function checkSdkRange(def: PluginDefinition, where: Located): void {
  const range = def.sdkVersion ?? where.sdkRange;
  // a `file:` or `workspace:` link is the SDK of this very checkout
  if (!range || /^(file|workspace|link):/.test(range)) return;
  const ok = satisfies(SDK_VERSION, range);
  if (ok === true) return;
  throw new BootError(ok === undefined
    ? `Plugin '${def.name}' (${where.from}) declares SDK range '${range}', which is not a semver range`
    : `Plugin '${def.name}' (${where.from}) needs SDK ${SDK_NAME}@${range}; this service has SDK ${SDK_VERSION}`,
  { code: 'PLUGIN_SDK_RANGE' });
}

/**
 * Expands the `plugins` key ("*" = every built-in of this build but the opt-in ones) and imports the definitions.
 * Paths and package names are resolved from `baseDir`, the config file's folder (the working
 * directory when there is none). Stops the boot on an unknown name, a wrong SDK range or two
 * different modules with one name, or a module inside `forbidden` (folders the API writes);
 * `required` names are skipped (always mounted anyway). Built-ins come from the build's table and
 * are never imported here; a path or package is imported with `load`, once per call (a boot calls
 * this once: core/kernel/plan.ts).
 */
export async function loadPlugins(entries: readonly PluginEntry[], required: readonly string[] = [], baseDir = process.cwd(),
  forbidden: readonly string[] = [], load: ModuleImporter = importModule): Promise<LoadedPlugin[]> {
  const out: LoadedPlugin[] = [];
  const seen = new Map<string, { def: PluginDefinition; from: string }>();
  for (const [index, entry] of entries.entries()) {
    const spec = typeof entry === 'string' ? entry : entry.module ?? entry.name ?? '';
    const entryConfig = typeof entry === 'string' ? undefined : entry.config;
    const names = spec === '*' ? starBuiltins() : [spec];
    for (const name of names) {
      // a required plugin is always mounted; naming it is allowed and changes nothing
      if (required.includes(name)) continue;
      const where = locate(name, index, baseDir);
      refuseWritable(where, index, forbidden);
      const def = where.builtin ?? await importDefinition(name, where, load);
      if (!def || typeof def.setup !== 'function' || typeof def.name !== 'string') {
        throw new BootError(`Plugin module '${name}' does not export a plugin definition (export default definePlugin({...}))`, { code: 'PLUGIN_NOT_A_PLUGIN' });
      }
      checkSdkRange(def, where);
      const before = seen.get(def.name);
      // the same module named twice (e.g. "*" and "memfs") is mounted once
      if (before?.def === def) {
        if (entryConfig !== undefined) out.find((p) => p.def === def)!.entryConfig = entryConfig;
        continue;
      }
      if (before || required.includes(def.name)) {
        throw new BootError(`Two plugins are named '${def.name}': ${before ? before.from : 'the required built-in'} and ${where.from} (plugins[${index}]); plugin names must be unique`, { code: 'PLUGIN_DUPLICATE' });
      }
      seen.set(def.name, { def, from: where.from });
      out.push({ def, entryConfig, index });
    }
  }
  return out;
}
