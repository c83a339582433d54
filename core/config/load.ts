import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { BootError, writeFileAtomic } from '../../sdk/index.ts';
import { currentBuild } from './build.ts';
import type { ConfigData } from './config-data.ts';
import { ALIASES, applyEnv, type EnvResult } from './env.ts';
import { GENERATED } from './generate.ts';
import { upgradeLayout } from './decode.ts';
import { stripJsonComments } from './jsonc.ts';
import { getPath, setPath, isPlainObject, deepEqual } from './schema-walk.ts';

export { DEFAULT_CONFIG_FILE, resolveConfigPath } from './path.ts';


/**
 * Makes the alias sections equal. The one that differs from `previous` is the one the user
 * changed; if both changed differently, the names of both keys are returned as a conflict.
 */
export function syncAliases(cfg: Record<string, unknown>, previous?: Record<string, unknown>): string[] {
  const conflicts: string[] = [];
  for (const [main, alias] of ALIASES) {
    const a = getPath(cfg, main);
    const b = getPath(cfg, alias);
    if (b === undefined || deepEqual(a, b)) { setPath(cfg, alias, structuredClone(a)); continue; }
    if (a === undefined) { setPath(cfg, main, structuredClone(b)); continue; }
    const prev = previous ? getPath(previous, main) : undefined;
    const aChanged = !deepEqual(a, prev);
    const bChanged = !deepEqual(b, prev);
    if (previous && aChanged && bChanged) { conflicts.push(main, alias); continue; }
    const winner = previous && bChanged && !aChanged ? b : a;
    setPath(cfg, main, structuredClone(winner));
    setPath(cfg, alias, structuredClone(winner));
  }
  return conflicts;
}

/** Fills defaults (and drops unknown keys) without touching what was given. */
export function withDefaults(raw: unknown): ConfigData {
  const schema = currentBuild().configSchema;
  const v = Value.Default(schema, Value.Clone(raw ?? {}));
  return Value.Clean(schema, v) as ConfigData;
}

export interface LoadedConfig {
  path: string;
  /** As stored in the file (no environment). */
  stored: ConfigData;
  /** Stored merged with the environment: what the app runs with. */
  active: ConfigData;
  env: EnvResult;
  /** True when the file did not exist (or was empty) and was created now. */
  fresh: boolean;
  /** The file's text after loading (as read, or as written back): what a rollback restores. */
  text?: string;
  /**
   * The stored form differs from the file (a new file, an old layout, generated secrets and ids):
   * `persistLoaded` writes it once the config has booted, never before (a start its validation
   * refused rewrote the operator's file, comments and unknown keys gone).
   */
  unsaved: boolean;
}

/** Reads the file (creating it with defaults on first start) and merges the environment. */
export async function loadConfig(path: string, env: NodeJS.ProcessEnv): Promise<LoadedConfig> {
  let text = '';
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new BootError(`cannot read config file ${path}: ${(err as Error).message}`);
    }
  }
  let raw: Record<string, unknown> = {};
  if (text.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(stripJsonComments(text));
      if (!isPlainObject(parsed)) throw new Error('not a JSON object');
      raw = parsed;
    } catch (err) {
      throw new BootError(`config file ${path} is not valid JSON (${(err as Error).message}); fix or remove it`);
    }
  }
  const fresh = text.trim() === '';
  const version = raw.version ?? 3;
  if (version !== 3) {
    if (version === 1 || version === 2) upgradeLayout(raw, version);
    else throw new BootError(`config file ${path} has an unknown layout version ${JSON.stringify(version)} (want 3)`);
  }
  let changed = fresh || version !== 3;
  for (const [p, gen] of Object.entries(GENERATED)) {
    if (getPath(raw, p) === undefined) { setPath(raw, p, gen()); changed = true; }
  }
  if (!raw.created_at) { raw.created_at = new Date().toISOString(); changed = true; }
  syncAliases(raw);
  const stored = withDefaults(raw);
  const { active, env: envRes } = activate(stored, env);
  return { path, stored, active, env: envRes, fresh, text, unsaved: changed };
}

/** Writes a loaded config's stored form when it differs from the file (call once it booted). */
export async function persistLoaded(loaded: LoadedConfig): Promise<void> {
  if (!loaded.unsaved) return;
  loaded.text = await saveConfigFile(loaded.path, loaded.stored);
  loaded.unsaved = false;
}

/** The stored config merged with the environment. */
export function activate(stored: ConfigData, env: NodeJS.ProcessEnv): { active: ConfigData; env: EnvResult } {
  const active = structuredClone(stored) as unknown as Record<string, unknown>;
  const envRes = applyEnv(active, env);
  const u = env.CORE_STORAGE_MEMORY_AUTH_USERNAME;
  const p = env.CORE_STORAGE_MEMORY_AUTH_PASSWORD;
  if (u !== undefined && p !== undefined) setPath(active, 'storage.memory.auth.enable', u !== '' || p !== '');
  // the environment sets the interface's names; copy them to the alias sections
  for (const [main, alias] of ALIASES) setPath(active, alias, structuredClone(getPath(active, main)));
  return { active: active as unknown as ConfigData, env: envRes };
}

/** Writes the file atomically; returns the text written. */
export async function saveConfigFile(path: string, cfg: ConfigData): Promise<string> {
  const text = JSON.stringify(cfg, null, 4) + '\n';
  await writeFileAtomic(path, text);
  return text;
}

export function configDir(path: string): string {
  return dirname(path);
}
