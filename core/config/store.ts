import { ApiError } from '../../sdk/index.ts';
import { currentBuild } from './build.ts';
import type { ConfigData } from './config-data.ts';
import { decodeNulls, upgradeLayout } from './decode.ts';
import { activate, saveConfigFile, syncAliases, withDefaults, type LoadedConfig } from './load.ts';
import { deepMerge, isPlainObject, setPath } from './schema-walk.ts';
import { holdOperatorKeys } from './operator-only.ts';
import type { LoadedPlugin } from './plugin-entries.ts';
import { semanticErrors, sentValueErrors, typeErrors, type ConfigErrors } from './validate.ts';
import { applyErrors } from './apply-checks.ts';
import { heldPorts } from './held-ports.ts';
import type { KeptPorts } from './listeners.ts';

const ZERO_TIME = '0001-01-01T00:00:00Z';

/**
 * Outcome of a rejected PUT: 400 for shape errors (`type`, bounds included) and for what would
 * fail at apply (`apply`: ports, listeners, TLS files, folders), 409 with a ConfigError map for values.
 */
export class ConfigRejected extends Error {
  readonly status: 400 | 409;
  readonly errors: ConfigErrors;
  readonly kind: 'type' | 'value' | 'apply';
  constructor(status: 400 | 409, errors: ConfigErrors, kind: 'type' | 'value' | 'apply' = status === 409 ? 'value' : 'type') {
    super('config rejected');
    this.status = status;
    this.errors = errors;
    this.kind = kind;
  }
}

/**
 * The configuration as the API sees it: what is stored in the file, what is active (stored +
 * environment), and when each happened. A PUT stores; only a reload applies.
 */
export class ConfigStore {
  #stored: ConfigData;
  #active: ConfigData;
  #overrides: string[];
  readonly #path: string;
  readonly #env: NodeJS.ProcessEnv;
  #createdAt: string;
  #updatedAt: string;
  readonly #loadedAt = new Date().toISOString();
  #started: readonly LoadedPlugin[] | undefined;
  /** The config the running app was built with: its listeners' ports are this service's own. */
  readonly #running: ConfigData;

  readonly #kept: () => KeptPorts;

  /** `kept`: the API's ports now (a reload binds them again where the config says port 0). */
  constructor(loaded: LoadedConfig, env: NodeJS.ProcessEnv, kept: () => KeptPorts = () => ({})) {
    this.#kept = kept;
    this.#stored = loaded.stored;
    this.#active = loaded.active;
    this.#running = loaded.active;
    this.#overrides = loaded.env.overrides;
    this.#path = loaded.path;
    this.#env = env;
    this.#createdAt = loaded.stored.created_at;
    this.#updatedAt = loaded.fresh ? ZERO_TIME : loaded.stored.created_at;
  }

  get active(): ConfigData { return this.#active; }
  /** The plugins the app loaded: a PUT checks their settings with these and imports nothing. */
  useStarted(loaded: readonly LoadedPlugin[]): void { this.#started = loaded; }
  get stored(): ConfigData { return this.#stored; }
  get path(): string { return this.#path; }

  /** The `Config` resource of `GET /api/v3/config`. */
  view(): { config: ConfigData; created_at: string; loaded_at: string; updated_at: string; overrides: string[] } {
    return {
      config: this.#active, created_at: this.#createdAt, loaded_at: this.#loadedAt,
      updated_at: this.#updatedAt, overrides: this.#overrides,
    };
  }

  /** Validates a partial config over the stored one and stores it atomically. */
  async put(body: unknown): Promise<void> {
    if (!isPlainObject(body)) throw new ApiError(400, 'Invalid JSON', ['the config must be a JSON object']);
    const version = body.version ?? 3;
    if (version !== 3 && version !== 1 && version !== 2) {
      throw new ApiError(400, 'Invalid config version', [`version ${JSON.stringify(version)}`]);
    }
    const patch = structuredClone(body);
    delete patch.created_at;
    const cleared = decodeNulls(patch, currentBuild().configSchema);
    if (version === 1 || version === 2) upgradeLayout(patch, version, true);
    patch.version = 3;
    const merged = deepMerge(structuredClone(this.#stored) as unknown as Record<string, unknown>, patch);
    for (const path of cleared) setPath(merged, path, {});
    const conflicts = syncAliases(merged, this.#stored as unknown as Record<string, unknown>);
    if (conflicts.length) {
      throw new ConfigRejected(409, Object.fromEntries(conflicts.map((k) => [k, [`${conflicts.join(' and ')} were changed differently`]])));
    }
    holdOperatorKeys(merged, this.#stored, this.#active, patch);
    // what no key can hold (sentValueErrors), unless the key's own form says more of the same value
    const shape = { ...sentValueErrors(patch, this.#stored), ...typeErrors(withDefaultsKeepTypes(merged)) };
    if (Object.keys(shape).length) throw new ConfigRejected(400, shape);
    const next = withDefaults(merged);
    const { active, env } = activate(next, this.#env);
    const errs: ConfigErrors = { ...env.errors, ...(await semanticErrors(active, this.#started ?? [])) };
    if (Object.keys(errs).length) throw new ConfigRejected(409, errs);
    const apply = await applyErrors(active, await heldPorts(this.#running, this.#kept()), this.#path, this.#kept());
    if (Object.keys(apply).length) throw new ConfigRejected(400, apply, 'apply');
    const now = new Date().toISOString();
    next.created_at = now;
    await saveConfigFile(this.#path, next);
    this.#stored = next;
    this.#active = active;
    this.#overrides = env.overrides;
    this.#createdAt = now;
    this.#updatedAt = now;
  }
}

/** Type-checks with defaults filled but without dropping wrong values (Clean would hide them). */
function withDefaultsKeepTypes(merged: Record<string, unknown>): unknown {
  return deepMerge(withDefaults({}), merged);
}
