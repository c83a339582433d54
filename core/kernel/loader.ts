import { readdirSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Value } from '@sinclair/typebox/value';
import { BootError, BUILTIN_PLUGINS, type ConfigData, type PluginDefinition, type PluginEntry } from '../../sdk/index.ts';

const PLUGINS_DIR = fileURLToPath(new URL('../../plugins/', import.meta.url));

/** A plugin chosen by the configuration, with its settings from the `plugins` entry. */
export interface LoadedPlugin {
  def: PluginDefinition;
  entryConfig: unknown;
  /** Position in the `plugins` list, for error paths and tie-breaking. */
  index: number;
}

/** Built-in plugins present in this build (a folder with an index.ts under plugins/). */
export function availableBuiltins(): string[] {
  if (!existsSync(PLUGINS_DIR)) return [];
  return readdirSync(PLUGINS_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(resolve(PLUGINS_DIR, d.name, 'index.ts')))
    .map((d) => d.name)
    .sort((a, b) => order(a) - order(b));
}

function order(name: string): number {
  const i = (BUILTIN_PLUGINS as readonly string[]).indexOf(name);
  return i < 0 ? BUILTIN_PLUGINS.length : i;
}

function isModulePath(s: string): boolean {
  return s.startsWith('.') || s.startsWith('/') || s.endsWith('.ts') || s.endsWith('.js') || s.endsWith('.mjs');
}

/**
 * Expands the `plugins` key ("*" = every built-in of this build) and imports the definitions.
 * An unknown name stops the boot with the list of known ones; `required` names are skipped.
 */
export async function loadPlugins(entries: readonly PluginEntry[], required: readonly string[] = []): Promise<LoadedPlugin[]> {
  const builtins = availableBuiltins();
  const out: LoadedPlugin[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    const spec = typeof entry === 'string' ? entry : entry.module ?? entry.name ?? '';
    const entryConfig = typeof entry === 'string' ? undefined : entry.config;
    const names = spec === '*' ? builtins : [spec];
    for (const name of names) {
      // a required plugin is always mounted; naming it is allowed and changes nothing
      if (required.includes(name)) continue;
      let url: string;
      if (isModulePath(name)) url = pathToFileURL(resolve(name)).href;
      else if (builtins.includes(name)) url = pathToFileURL(resolve(PLUGINS_DIR, name, 'index.ts')).href;
      else throw new BootError(`Unknown plugin '${name}' in 'plugins[${index}]'; known plugins: ${builtins.join(', ')}${builtins.length ? '' : '(none)'} or a module path`);
      let def: PluginDefinition;
      try {
        const mod = (await import(url)) as { default?: PluginDefinition; plugin?: PluginDefinition };
        def = mod.default ?? mod.plugin!;
      } catch (err) {
        throw new BootError(`Plugin '${name}' could not be loaded: ${(err as Error).message}`, { cause: err });
      }
      if (!def || typeof def.setup !== 'function' || typeof def.name !== 'string') {
        throw new BootError(`Plugin module '${name}' does not export a plugin definition (export default definePlugin({...}))`);
      }
      if (seen.has(def.name)) continue;
      seen.add(def.name);
      out.push({ def, entryConfig, index });
    }
  }
  return out;
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
