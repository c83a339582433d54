import { readdirSync, existsSync, realpathSync } from 'node:fs';
import { relative, resolve, isAbsolute } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import {
  BootError, BUILTIN_PLUGINS, OPT_IN_PLUGINS, SDK_NAME, SDK_VERSION, type ConfigData, type PluginDefinition, type PluginEntry,
} from '../../sdk/index.ts';
import { findPluginPackage } from './resolve-package.ts';
import { satisfies } from './semver-range.ts';

const PLUGINS_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url));
/** The service's own folder: its node_modules is the last place a plugin package is looked for. */
const SERVICE_DIR = fileURLToPath(new URL('../../', import.meta.url));
/** A built-in's entry: `index.js` when this process runs the install step's build, `index.ts` from the sources. */
const ENTRY_FILE = import.meta.url.endsWith('.js') ? 'index.js' : 'index.ts';

/** The module URL of a built-in plugin's definition. */
export function builtinUrl(name: string): string {
  return pathToFileURL(resolve(PLUGINS_DIR, name, ENTRY_FILE)).href;
}

/** A plugin chosen by the configuration, with its settings from the `plugins` entry. */
export interface LoadedPlugin {
  def: PluginDefinition;
  entryConfig: unknown;
  /** Position in the `plugins` list, for error paths and tie-breaking. */
  index: number;
}

/** Built-in plugins present in this build (a folder with an index.ts, or its built index.js, under plugins/). */
export function availableBuiltins(): string[] {
  if (!existsSync(PLUGINS_DIR)) return [];
  return readdirSync(PLUGINS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(resolve(PLUGINS_DIR, d.name, ENTRY_FILE)))
    .map((d) => d.name)
    .sort((a, b) => order(a) - order(b));
}

/** What `"*"` expands to: every built-in of this build except the opt-in ones (`OPT_IN_PLUGINS`). */
export function starBuiltins(): string[] {
  return availableBuiltins().filter((n) => !OPT_IN_PLUGINS.includes(n));
}

function order(name: string): number {
  const i = (BUILTIN_PLUGINS as readonly string[]).indexOf(name);
  return i < 0 ? BUILTIN_PLUGINS.length : i;
}

function isModulePath(s: string): boolean {
  return s.startsWith('.') || s.startsWith('/') || s.endsWith('.ts') || s.endsWith('.js') || s.endsWith('.mjs');
}

/** Where a `plugins` entry's code is, and the SDK range its package declares. */
interface Located { url: string; sdkRange?: string; from: string; /** The file of a path or package entry (not of a built-in). */ file?: string }

/**
 * Finds an entry's module: a built-in by name, a path (relative to the config file's folder), or
 * a package (from the config file's folder, then from the service's own node_modules).
 */
function locate(name: string, index: number, builtins: string[], baseDir: string): Located {
  if (isModulePath(name)) {
    const file = resolve(baseDir, name);
    return { url: pathToFileURL(file).href, from: file, file };
  }
  if (builtins.includes(name)) return { url: builtinUrl(name), from: `built-in '${name}'` };
  const pkg = findPluginPackage(name, [baseDir, SERVICE_DIR], SDK_NAME);
  if (pkg) return { url: pkg.url, sdkRange: pkg.sdkRange, from: `package ${pkg.name}@${pkg.version} (${pkg.dir})`, file: pkg.dir };
  throw new BootError(
    `Unknown plugin '${name}' in 'plugins[${index}]'; known plugins: ${builtins.join(', ') || '(none)'}, a package name or a module path ` +
    `(no package '${name}' in ${baseDir} or the service's node_modules)`,
    { code: 'PLUGIN_NOT_FOUND' });
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
 * `required` names are skipped (always mounted anyway).
 */
export async function loadPlugins(entries: readonly PluginEntry[], required: readonly string[] = [], baseDir = process.cwd(),
  forbidden: readonly string[] = []): Promise<LoadedPlugin[]> {
  const builtins = availableBuiltins();
  const out: LoadedPlugin[] = [];
  const seen = new Map<string, { def: PluginDefinition; from: string }>();
  for (const [index, entry] of entries.entries()) {
    const spec = typeof entry === 'string' ? entry : entry.module ?? entry.name ?? '';
    const entryConfig = typeof entry === 'string' ? undefined : entry.config;
    const names = spec === '*' ? builtins.filter((n) => !OPT_IN_PLUGINS.includes(n)) : [spec];
    for (const name of names) {
      // a required plugin is always mounted; naming it is allowed and changes nothing
      if (required.includes(name)) continue;
      const where = locate(name, index, builtins, baseDir);
      refuseWritable(where, index, forbidden);
      let def: PluginDefinition;
      try {
        const mod = (await import(where.url)) as { default?: PluginDefinition; plugin?: PluginDefinition };
        def = mod.default ?? mod.plugin!;
      } catch (err) {
        throw new BootError(`Plugin '${name}' could not be loaded from ${where.from}: ${(err as Error).message}`, { cause: err, code: 'PLUGIN_LOAD' });
      }
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

/** What of a `plugins` list decides which code runs: each entry's name or module, in order (not its settings). */
export function pluginCode(entries: readonly PluginEntry[]): string[] {
  return entries.map((e) => (typeof e === 'string' ? e : e.module ?? e.name ?? ''));
}

/** The started plugins with the settings a later config gives their entries (same code, same positions). */
export function withEntrySettings(started: readonly LoadedPlugin[], entries: readonly PluginEntry[]): LoadedPlugin[] {
  return started.map((p) => {
    const e = entries[p.index];
    return { ...p, entryConfig: e !== undefined && typeof e !== 'string' ? e.config : p.entryConfig };
  });
}

/** Validates a vendor plugin's settings against its schema; every error with its path. */
export function vendorConfigErrors(p: LoadedPlugin, whole?: ConfigData): string[] {
  const schema = p.def.configSchema;
  const at = `plugins[${p.index}].config`;
  const value = schema ? Value.Default(schema, Value.Clone(p.entryConfig ?? {})) : p.entryConfig;
  const errs = schema ? [...Value.Errors(schema, value)].map((e) => `${at}${e.path.replace(/\//g, '.')}: ${e.message}`) : [];
  // a vendor plugin's own rules run on its entry settings; built-ins' run with the whole config
  if (errs.length || !p.def.validate || !whole || p.def.configKey || p.def.sectionKey) return errs;
  for (const [k, msgs] of Object.entries(p.def.validate(value as never, whole))) {
    for (const m of msgs) errs.push(`${k ? `${at}.${k}` : at}: ${m}`);
  }
  return errs;
}

export function vendorConfig(p: LoadedPlugin): unknown {
  const schema = p.def.configSchema;
  return schema ? Value.Default(schema, Value.Clone(p.entryConfig ?? {})) : p.entryConfig;
}
