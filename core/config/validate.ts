import { ipFamily } from '../../sdk/ip.ts';
import { Value, ValueErrorType } from '@sinclair/typebox/value';
import { isFile, plainText, validCidr, type ConfigErrors } from '../../sdk/index.ts';
import { MAX_SERVING_THREADS } from '../../sdk/config/thread-limits.ts';
import { isDir } from './fs-checks.ts';
import { schemaErrorMessage } from './schema-message.ts';
import type { ConfigData } from './config-data.ts';
import { getPath } from './schema-walk.ts';
import { currentBuild } from './build.ts';
import { ownerErrors, sectionDefinitions } from './owners.ts';
import type { LoadedPlugin } from './plugin-entries.ts';
import { blockedPrefixes } from '../http/router-config.ts';

export type { ConfigErrors };

function add(errs: ConfigErrors, key: string, msg: string): void {
  (errs[key] ??= []).push(msg);
}

/**
 * Type errors of the whole config at once, keyed by dotted path: wrong types, bounds, and values
 * not of their key's form (addresses, URLs, paths: `sdk/config/formats.ts`), each naming the form.
 * `formats: false` leaves the forms out (what remains makes the config unfit for the value rules).
 */
export function typeErrors(cfg: unknown, opts: { formats?: boolean } = {}): ConfigErrors {
  const errs: ConfigErrors = {};
  for (const e of Value.Errors(currentBuild().configSchema, cfg)) {
    if (opts.formats === false && e.type === ValueErrorType.StringFormat) continue;
    const key = e.path.replace(/^\//, '').replace(/\//g, '.') || '(root)';
    if (!errs[key]) add(errs, key, schemaErrorMessage(e));
  }
  return errs;
}

/** Errors of a client's config body reported at most (one per value). */
const MAX_SENT_ERRORS = 100;

/**
 * Values a client sent that no key can hold, whatever its schema: numbers beyond 2^53 - 1 (stored
 * as another number: 2^53 + 1 became 2^53), and text with NUL or a lone surrogate (`GET` would
 * then give JSON strict parsers refuse; no program takes NUL in an argument). Checked on what a
 * PUT sends only, and only where it differs from `stored` (clients send back the whole config they
 * read: a value stored before this rule does not block every later PUT); a config file or a stored
 * config is read as it is.
 */
export function sentValueErrors(body: unknown, stored: unknown): ConfigErrors {
  const errs: ConfigErrors = {};
  let n = 0;
  const at = (was: unknown, k: string | number): unknown => (was !== null && typeof was === 'object' ? (was as Record<string, unknown>)[k] : undefined);
  const walk = (v: unknown, path: string, was: unknown) => {
    if (n >= MAX_SENT_ERRORS || v === was) return;
    if (typeof v === 'number' && Math.abs(v) > Number.MAX_SAFE_INTEGER) {
      add(errs, path || '(root)', 'must be a number of at most 2^53 - 1 (9007199254740991)');
      n++;
    } else if (typeof v === 'string' && !plainText(v)) {
      add(errs, path || '(root)', 'must be text without NUL characters or lone UTF-16 surrogates');
      n++;
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, path ? `${path}.${i}` : String(i), at(was, i)));
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k, at(was, k));
  };
  walk(body, '', stored);
  return errs;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];
const LOG_FORMATS = ['auto', 'json', 'console'];

function loadedNames(cfg: ConfigData): Set<string> {
  const names = new Set(cfg.plugins.map((p) => (typeof p === 'string' ? p : p.name ?? p.module ?? '')));
  // "*" loads every built-in this build has, but the opt-in ones
  if (names.has('*')) for (const b of currentBuild().builtIns) if (!b.optIn) names.add(b.def.name);
  return names;
}

/**
 * Cross-field and value checks (reference 6.2); every error at once: the core's own keys here,
 * every other section by its owner (the plugin's `validate`, see owners.ts), then the rule that
 * an enabled service needs its plugin loaded (each definition's `enableKey`). `started`, the
 * plugins the boot loaded, checks the vendor entries' settings; nothing is located or imported.
 */
export async function semanticErrors(cfg: ConfigData, started?: readonly LoadedPlugin[]): Promise<ConfigErrors> {
  const errs: ConfigErrors = coreErrors(cfg);
  for (const [k, msgs] of Object.entries(ownerErrors(cfg, started))) for (const m of msgs) add(errs, k, m);
  const loaded = loadedNames(cfg);
  const defs = [...sectionDefinitions(), ...(started ?? []).map((p) => p.def)];
  const builtins = currentBuild().builtIns.filter((b) => !b.optIn).map((b) => b.def.name).join(', ');
  for (const def of new Set(defs)) {
    if (def.enableKey && getPath(cfg, def.enableKey) === true && !loaded.has(def.name)) {
      add(errs, def.enableKey, `plugin '${def.name}' is not loaded (add it to 'plugins'; built-ins: ${builtins})`);
    }
  }
  return errs;
}

/** Rules of the keys the core owns (version, id, address, log, db, api access, tls, storage's shared keys, service, router). */
function coreErrors(cfg: ConfigData): ConfigErrors {
  const errs: ConfigErrors = {};
  if (cfg.version !== 3) add(errs, 'version', `must be 3, is ${cfg.version}`);
  if (!LOG_LEVELS.includes(cfg.log.level)) add(errs, 'log.level', `'${cfg.log.level}' is not one of ${LOG_LEVELS.join(', ')}`);
  if (!cfg.id.trim()) add(errs, 'id', 'must not be empty');
  for (const proto of ['http', 'https'] as const) {
    for (const list of ['allow', 'block'] as const) {
      for (const c of cfg.api.access[proto][list]) {
        if (!validCidr(c)) add(errs, `api.access.${proto}.${list}`, `'${c}' is not a valid CIDR`);
      }
    }
  }
  for (const c of cfg.api.access.trusted_proxies) {
    if (!validCidr(c)) add(errs, 'api.access.trusted_proxies', `'${c}' is not a valid CIDR`);
  }
  if (cfg.tls.enable && !cfg.tls.auto) {
    for (const k of ['cert_file', 'key_file'] as const) {
      if (!cfg.tls[k]) add(errs, `tls.${k}`, 'must be set when TLS is enabled');
    }
  }
  for (const k of ['cert_file', 'key_file'] as const) {
    if (cfg.tls[k] && !isFile(cfg.tls[k])) add(errs, `tls.${k}`, `${cfg.tls[k]} does not exist`);
  }
  if (cfg.tls.enable && cfg.tls.auto) {
    if (cfg.host.name.length === 0) add(errs, 'host.name', 'must name this host when tls.auto is on');
    for (const n of cfg.host.name) if (ipFamily(n) || !/^[a-z0-9.-]+$/i.test(n)) add(errs, 'host.name', `'${n}' is not a DNS name (tls.auto)`);
  }
  const st = cfg.storage;
  if (st.mimetypes_file && !isFile(st.mimetypes_file)) add(errs, 'storage.mimetypes_file', `${st.mimetypes_file} does not exist`);
  if (!cfg.db.dir.trim()) add(errs, 'db.dir', 'must not be empty');
  for (const o of st.cors.origins) {
    if (!o.includes('*') && !/^https?:\/\//.test(o)) add(errs, 'storage.cors.origins', `'${o}' is not a valid origin`);
  }
  if (cfg.service.enable && (!cfg.service.token || !cfg.service.url)) add(errs, 'service.enable', 'service.token and service.url must be set');
  if (cfg.router.ui_path && !isDir(cfg.router.ui_path)) add(errs, 'router.ui_path', `${cfg.router.ui_path} is not a directory`);
  if (!LOG_FORMATS.includes(cfg.log.format)) add(errs, 'log.format', `'${cfg.log.format}' is not one of ${LOG_FORMATS.join(', ')}`);
  routerErrors(cfg, errs);
  if (cfg.log.max_lines < 0) add(errs, 'log.max_lines', 'must not be negative');
  if (cfg.http.threads < -1 || cfg.http.threads > MAX_SERVING_THREADS) add(errs, 'http.threads', `must be -1 (auto) or between 0 and ${MAX_SERVING_THREADS}`);
  return errs;
}

/** `router.routes` (reference 11.8): no key under a blocked prefix; a directory route needs a folder. */
function routerErrors(cfg: ConfigData, errs: ConfigErrors): void {
  const blocked = blockedPrefixes(cfg.router);
  for (const [from, to] of Object.entries(cfg.router.routes)) {
    if (!from.startsWith('/')) add(errs, 'router.routes', `'${from}' must start with /`);
    const hit = blocked.find((p) => from.startsWith(p));
    if (hit) add(errs, 'router.routes', `'${from}' starts with the blocked prefix ${hit}`);
    if (from.endsWith('/*') && !isDir(to)) add(errs, 'router.routes', `${to} (for ${from}) is not a directory`);
  }
}
