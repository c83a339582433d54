import { dirname, resolve } from 'node:path';
import {
  aboutRef, appLogRef, BootError, childrenRef, fileDoorRef, placeholdersRef, runCredentialsRef, serverRef, streamTableRef, tlsCertificatesRef, type PluginDefinition,
} from '../../sdk/index.ts';
import type { ConfigData } from '../config/config-data.ts';
import { semanticErrors, typeErrors } from '../config/validate.ts';
import type { ServiceOverride } from './container.ts';
import { orderPlugins, type GraphNode } from './graph.ts';
import { loadPlugins, vendorConfigErrors, withEntrySettings, type LoadedPlugin, type ModuleImporter } from './loader.ts';
import { REQUIRED_PLUGINS } from './required.ts';

/** Single-provider services the core provides before any plugin mounts (checked when the app is built). */
export const CORE_SERVICES: readonly string[] = [fileDoorRef, serverRef, placeholdersRef, runCredentialsRef, streamTableRef, tlsCertificatesRef, childrenRef, aboutRef, appLogRef].map((r) => r.id);

export interface PlanOptions {
  /** Folder plugin paths and packages are found from; default the config file's folder, else the cwd. */
  pluginBase?: string;
  /** Where the config file is (its folder is the default `pluginBase`). */
  configPath?: string;
  /** The plugins the process loaded at its start: a reload plans with these and imports nothing. */
  started?: readonly LoadedPlugin[];
  /** Plugin definitions mounted after the configured ones (the test kit passes a plugin under test). */
  plugins?: readonly { def: PluginDefinition; entryConfig?: unknown }[];
  /** Services provided before any plugin mounts and kept (the test kit's stand-ins). */
  overrides?: readonly ServiceOverride[];
  /** How a located plugin module is imported (default `import()`; a test counts the calls). */
  importModule?: ModuleImporter;
}

/** A plugin in the graph: what it needs and provides (a provider the overrides replace is left out). */
export type PlanNode = LoadedPlugin & GraphNode;

/**
 * What a boot mounts, decided once from a configuration: validated whole (each section by its
 * owner), the plugins located and imported (once), their settings checked, the graph ordered.
 * `buildApp` takes it and decides nothing more.
 */
export interface BootPlan {
  readonly kind: 'boot-plan';
  readonly config: ConfigData;
  readonly pluginBase: string;
  /** The configured plugins (the process's start list for its reloads). */
  readonly configured: readonly LoadedPlugin[];
  /** The required plugins (the process engine), in mount order: mounted first. */
  readonly required: readonly PlanNode[];
  /** The configured plugins and the extra ones, in mount order (providers first, ties in config order). */
  readonly order: readonly PlanNode[];
  readonly overrides: readonly ServiceOverride[];
}

export function isBootPlan(x: unknown): x is BootPlan {
  return typeof x === 'object' && x !== null && (x as { kind?: unknown }).kind === 'boot-plan';
}

/** Folders the API can write into: no plugin module may be loaded from there. */
function apiWritable(config: ConfigData): string[] {
  return [config.storage.disk.dir, config.db.dir].map((d) => resolve(d));
}

function formatErrors(errs: Record<string, string[]>): string {
  return Object.entries(errs).map(([k, m]) => `  ${k}: ${m.join('; ')}`).join('\n');
}

/** Validates the configuration, loads its plugins (the only import of configured modules) and orders the graph. */
export async function planBoot(config: ConfigData, opts: PlanOptions = {}): Promise<BootPlan> {
  const errs = { ...typeErrors(config) };
  if (Object.keys(errs).length) throw new BootError(`invalid configuration:\n${formatErrors(errs)}`);
  // plugin paths and packages are found from the config file's folder (the cwd without one)
  const pluginBase = opts.pluginBase ?? (opts.configPath ? dirname(opts.configPath) : process.cwd());
  const requiredNames = REQUIRED_PLUGINS.map((d) => d.name);
  const configured = opts.started
    ? withEntrySettings(opts.started, config.plugins)
    : await loadPlugins(config.plugins, requiredNames, pluginBase, apiWritable(config), opts.importModule);
  Object.assign(errs, await semanticErrors(config, configured));
  if (Object.keys(errs).length) throw new BootError(`invalid configuration:\n${formatErrors(errs)}`);
  const loaded = [...configured];
  for (const p of opts.plugins ?? []) loaded.push({ def: p.def, entryConfig: p.entryConfig, index: loaded.length });
  const vendorErrs = loaded.flatMap((p) => vendorConfigErrors(p, config));
  if (vendorErrs.length) throw new BootError(`invalid plugin configuration:\n  ${vendorErrs.join('\n  ')}`);

  const overrides = opts.overrides ?? [];
  const overridden = new Set(overrides.filter((o) => !o.ref.multiple).map((o) => o.ref.id));
  const node = (p: LoadedPlugin): PlanNode => ({
    ...p, name: p.def.name, deps: Object.values(p.def.deps ?? {}), provides: (p.def.provides ?? []).filter((r) => !overridden.has(r.id)),
  });
  const core = new Set([...CORE_SERVICES, ...overridden]);
  const required = orderPlugins(REQUIRED_PLUGINS.map((def) => node({ def, entryConfig: undefined, index: -1 })), core);
  // what the required plugins provide (processes) is there for every configured plugin
  for (const p of required) for (const r of p.provides) if (!r.multiple) core.add(r.id);
  const order = orderPlugins(loaded.map(node), core);
  return { kind: 'boot-plan', config, pluginBase, configured, required, order, overrides };
}
