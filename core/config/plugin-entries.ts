import { Value } from '@sinclair/typebox/value';
import type { PluginDefinition, PluginEntry } from '../../sdk/index.ts';
import type { ConfigData } from './config-data.ts';
import { schemaErrorMessage } from './schema-message.ts';

/**
 * A plugin the configuration chose, with its settings from its `plugins` entry. The kernel's loader
 * makes these once per boot (core/kernel/loader.ts); the config code only reads them, so validating
 * a configuration never locates or imports a module.
 */
export interface LoadedPlugin {
  def: PluginDefinition;
  entryConfig: unknown;
  /** Position in the `plugins` list, for error paths and tie-breaking. */
  index: number;
}

/** What of a `plugins` list decides which code runs: each entry's name or module, in order (not its settings). */
export function pluginCode(entries: readonly PluginEntry[]): string[] {
  // a client's PUT may carry anything here (null, numbers): it names no code, and differs from the file's
  return entries.map((e) => (typeof e === 'string' ? e : e !== null && typeof e === 'object' ? e.module ?? e.name ?? '' : `\0${JSON.stringify(e)}`));
}

/** The started plugins with the settings a later config gives their entries (same code, same positions). */
export function withEntrySettings(started: readonly LoadedPlugin[], entries: readonly PluginEntry[]): LoadedPlugin[] {
  return started.map((p) => {
    const e = entries[p.index];
    return { ...p, entryConfig: e !== null && typeof e === 'object' ? e.config : p.entryConfig };
  });
}

/** Validates a vendor plugin's settings against its schema; every error with its path. */
export function vendorConfigErrors(p: LoadedPlugin, whole?: ConfigData): string[] {
  const schema = p.def.configSchema;
  const at = `plugins[${p.index}].config`;
  const value = schema ? Value.Default(schema, Value.Clone(p.entryConfig ?? {})) : p.entryConfig;
  const errs = schema ? [...Value.Errors(schema, value)].map((e) => `${at}${e.path.replace(/\//g, '.')}: ${schemaErrorMessage(e)}`) : [];
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
