import { Value } from '@sinclair/typebox/value';
import type { ConfigErrors, PluginDefinition, PluginEntry } from '../../sdk/index.ts';
import { processPlugin } from '../process/plugin.ts';
import { currentBuild } from './build.ts';
import type { ConfigData } from './config-data.ts';
import { vendorConfigErrors, withEntrySettings, type LoadedPlugin } from './plugin-entries.ts';
import { getPath } from './schema-walk.ts';

/** Who checks which section: the process engine or a built-in plugin (its definition's `validate`). */
export interface SectionOwner {
  readonly owner: string;
  /** Dotted prefix of the owner's error keys. */
  readonly key: string;
  validate(whole: ConfigData): ConfigErrors;
}

/** A built-in's own settings: its section of the configuration, or its `plugins` entry's `config` with defaults. */
function ownConfig(def: PluginDefinition, whole: ConfigData): unknown {
  if (def.configKey) return getPath(whole, def.configKey);
  const entry = whole.plugins.find((p) => typeof p !== 'string' && p.name === def.name);
  const given = typeof entry === 'object' ? entry.config : undefined;
  return def.configSchema ? Value.Default(def.configSchema, Value.Clone(given ?? {})) : given;
}

/** The definitions that own a section of the configuration: the process engine, then every built-in of this build. */
export function sectionDefinitions(): readonly PluginDefinition[] {
  return [processPlugin as PluginDefinition, ...currentBuild().builtIns.map((b) => b.def)];
}

/**
 * Every section owner of this build, from the built-ins' definitions (pure data, part of this
 * build's module graph: nothing is located or imported here). They run loaded or not: the full
 * configuration is validated whatever `plugins` says, as clients may PUT any section.
 */
export function sectionOwners(): SectionOwner[] {
  const owners: SectionOwner[] = [];
  for (const def of sectionDefinitions()) {
    const key = def.sectionKey ?? def.configKey;
    const validate = def.validate;
    if (!validate || !key) continue;
    owners.push({ owner: def.name, key, validate: (c) => validate(ownConfig(def, c) as never, c) });
  }
  return owners;
}

/** The plugins a list names without locating anything: built-ins by name (`"*"` = all but the opt-in ones); a path or package is the boot's to find. */
export function namedBuiltins(entries: readonly PluginEntry[]): LoadedPlugin[] {
  const out: LoadedPlugin[] = [];
  for (const [index, e] of entries.entries()) {
    const spec = typeof e === 'string' ? e : e.module ?? e.name ?? '';
    const entryConfig = typeof e === 'string' ? undefined : e.config;
    for (const b of currentBuild().builtIns) {
      if ((spec === '*' && !b.optIn) || spec === b.def.name) out.push({ def: b.def, entryConfig, index });
    }
  }
  return out;
}

/**
 * The `plugins` list's settings: a vendor plugin's must pass its schema and `validate`. Checked with
 * the plugins the boot loaded (`started`); without them, the built-ins the list names.
 */
function pluginEntryErrors(cfg: ConfigData, started?: readonly LoadedPlugin[]): ConfigErrors {
  const errs: ConfigErrors = {};
  for (const p of started ? withEntrySettings(started, cfg.plugins) : namedBuiltins(cfg.plugins)) {
    for (const line of vendorConfigErrors(p, cfg)) {
      const i = line.indexOf(': ');
      (errs[line.slice(0, i)] ??= []).push(line.slice(i + 2));
    }
  }
  return errs;
}

/** Runs every owner's rules; keys get the owner's prefix. */
export function ownerErrors(cfg: ConfigData, started?: readonly LoadedPlugin[]): ConfigErrors {
  const errs: ConfigErrors = pluginEntryErrors(cfg, started);
  for (const o of sectionOwners()) {
    for (const [rel, msgs] of Object.entries(o.validate(cfg))) {
      const key = rel ? `${o.key}.${rel}` : o.key;
      (errs[key] ??= []).push(...msgs);
    }
  }
  return errs;
}
