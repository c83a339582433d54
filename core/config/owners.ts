import { Value } from '@sinclair/typebox/value';
import { KNOWN_SECTIONS, type ConfigData, type ConfigErrors, type PluginDefinition } from '../../sdk/index.ts';
import { availableBuiltins, builtinUrl, loadPlugins, vendorConfigErrors, withEntrySettings, type LoadedPlugin } from '../kernel/loader.ts';
import { REQUIRED_PLUGINS } from '../kernel/required.ts';
import { getPath } from './schema-walk.ts';

/** Who checks which section: a built-in plugin, a known section of a plugin not built yet, the engine. */
export interface SectionOwner {
  readonly owner: string;
  /** Dotted prefix of the owner's error keys. */
  readonly key: string;
  validate(whole: ConfigData): ConfigErrors;
}

/** A built-in's own settings: its ConfigData subtree, or its `plugins` entry's `config` with defaults. */
function ownConfig(def: PluginDefinition, whole: ConfigData): unknown {
  if (def.configKey) return getPath(whole, def.configKey);
  const entry = whole.plugins.find((p) => typeof p !== 'string' && p.name === def.name);
  const given = typeof entry === 'object' ? entry.config : undefined;
  return def.configSchema ? Value.Default(def.configSchema, Value.Clone(given ?? {})) : given;
}

/**
 * Every section owner of this build. Built-in plugins are imported for their definitions (pure
 * data), loaded or not: the full ConfigData is validated whatever `plugins` says, as clients may
 * PUT any section.
 */
export async function sectionOwners(): Promise<SectionOwner[]> {
  const owners: SectionOwner[] = [];
  const builtins = availableBuiltins();
  const defs = [...REQUIRED_PLUGINS];
  for (const name of builtins) {
    const url = builtinUrl(name);
    defs.push(((await import(url)) as { default: PluginDefinition }).default);
  }
  for (const def of defs) {
    const key = def.sectionKey ?? def.configKey;
    const validate = def.validate;
    if (!validate || !key) continue;
    owners.push({ owner: def.name, key, validate: (c) => validate(ownConfig(def, c) as never, c) });
  }
  for (const k of KNOWN_SECTIONS) {
    if (!builtins.includes(k.plugin)) owners.push({ owner: k.plugin, key: k.key, validate: (c) => k.validate(c) });
  }
  return owners;
}

/**
 * The `plugins` list itself: every entry must load, and a vendor plugin's settings must pass its
 * schema and `validate`. Only a start loads (imports) the entries; a PUT or a reload checks with the
 * plugins the process started with (`started`), so validating a config never imports a module.
 */
async function pluginEntryErrors(cfg: ConfigData, baseDir?: string, started?: readonly LoadedPlugin[]): Promise<ConfigErrors> {
  const errs: ConfigErrors = {};
  let loaded;
  try {
    loaded = started ? withEntrySettings(started, cfg.plugins) : await loadPlugins(cfg.plugins, REQUIRED_PLUGINS.map((d) => d.name), baseDir);
  } catch (err) {
    return { plugins: [(err as Error).message] };
  }
  for (const p of loaded) {
    for (const line of vendorConfigErrors(p, cfg)) {
      const i = line.indexOf(': ');
      (errs[line.slice(0, i)] ??= []).push(line.slice(i + 2));
    }
  }
  return errs;
}

/** Runs every owner's rules; keys get the owner's prefix. */
export async function ownerErrors(cfg: ConfigData, baseDir?: string, started?: readonly LoadedPlugin[]): Promise<ConfigErrors> {
  const errs: ConfigErrors = await pluginEntryErrors(cfg, baseDir, started);
  for (const o of await sectionOwners()) {
    for (const [rel, msgs] of Object.entries(o.validate(cfg))) {
      const key = rel ? `${o.key}.${rel}` : o.key;
      (errs[key] ??= []).push(...msgs);
    }
  }
  return errs;
}
