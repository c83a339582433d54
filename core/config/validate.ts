import { statSync, accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import { delimiter, join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { ConfigData, BUILTIN_PLUGINS } from '../../sdk/index.ts';
import { getPath } from './schema-walk.ts';
import { availableBuiltins } from '../kernel/loader.ts';

/** Dotted key -> messages; the body of a 409 ConfigError. */
export type ConfigErrors = Record<string, string[]>;

function add(errs: ConfigErrors, key: string, msg: string): void {
  (errs[key] ??= []).push(msg);
}

/** Type errors of the whole config at once, keyed by dotted path. */
export function typeErrors(cfg: unknown): ConfigErrors {
  const errs: ConfigErrors = {};
  for (const e of Value.Errors(ConfigData, cfg)) {
    const key = e.path.replace(/^\//, '').replace(/\//g, '.') || '(root)';
    if (!errs[key]) add(errs, key, e.message);
  }
  return errs;
}

export function validCidr(s: string): boolean {
  const [ip, bits, ...rest] = s.split('/');
  if (rest.length || bits === undefined || !/^\d+$/.test(bits)) return false;
  const v = isIP(ip!);
  return v !== 0 && Number(bits) <= (v === 4 ? 32 : 128);
}

/** `host:port` with a numeric port (a bare number means `:port`). */
export function validAddress(s: string): boolean {
  const m = /^(.*):(\d{1,5})$/.exec(/^\d+$/.test(s) ? `:${s}` : s);
  return !!m && Number(m[2]) <= 65535;
}

function isFile(p: string): boolean {
  try { return statSync(p).isFile(); } catch { return false; }
}

function isDir(p: string): boolean {
  try { return statSync(p).isDirectory(); } catch { return false; }
}

/** Whether a program name resolves to an executable (a path, or searched in PATH). */
export function findExecutable(bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = bin.includes('/') ? [bin] : (env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, bin));
  for (const c of candidates) {
    try { accessSync(c, constants.X_OK); if (isFile(c)) return c; } catch { /* next */ }
  }
  return undefined;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];

/** Which plugin serves an `enable` key; turning it on without the plugin loaded is an error. */
const ENABLE_KEYS: Record<string, string> = {
  'rtmp.enable': 'rtmp', 'srt.enable': 'srt', 'metrics.enable': 'metrics', 'playout.enable': 'playout',
  'api.auth.enable': 'auth', 'api.auth.idp.enable': 'idp-login',
};

function loadedNames(cfg: ConfigData): Set<string> {
  const names = new Set(cfg.plugins.map((p) => (typeof p === 'string' ? p : p.name ?? p.module ?? '')));
  // "*" loads every built-in this build has
  if (names.has('*')) for (const b of availableBuiltins()) names.add(b);
  return names;
}

/** Cross-field and value checks (reference 6.2); every error at once. */
export function semanticErrors(cfg: ConfigData): ConfigErrors {
  const errs: ConfigErrors = {};
  if (cfg.version !== 3) add(errs, 'version', `must be 3, is ${cfg.version}`);
  if (!LOG_LEVELS.includes(cfg.log.level)) add(errs, 'log.level', `'${cfg.log.level}' is not one of ${LOG_LEVELS.join(', ')}`);
  if (!cfg.id.trim()) add(errs, 'id', 'must not be empty');
  if (!validAddress(cfg.address)) add(errs, 'address', `'${cfg.address}' is not a host:port address`);
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
  const auth = cfg.api.auth;
  if (auth.enable && (!auth.username || !auth.password)) {
    add(errs, 'api.auth.enable', 'api.auth.username and api.auth.password must be set when auth is enabled');
  }
  if (auth.idp.enable) {
    if (auth.idp.tenants.length === 0) add(errs, 'api.auth.idp.tenants', 'at least one tenant is required');
    auth.idp.tenants.forEach((t, i) => {
      for (const k of ['domain', 'audience', 'clientid'] as const) {
        if (!t[k]) add(errs, 'api.auth.idp.tenants', `tenant ${i}: ${k} must not be empty`);
      }
    });
  }
  if (cfg.tls.enable && !cfg.tls.auto) {
    for (const k of ['cert_file', 'key_file'] as const) {
      if (!cfg.tls[k]) add(errs, `tls.${k}`, 'must be set when TLS is enabled');
    }
  }
  for (const k of ['cert_file', 'key_file'] as const) {
    if (cfg.tls[k] && !isFile(cfg.tls[k])) add(errs, `tls.${k}`, `${cfg.tls[k]} does not exist`);
  }
  if (!validAddress(cfg.tls.address)) add(errs, 'tls.address', `'${cfg.tls.address}' is not a host:port address`);
  const st = cfg.storage;
  if (st.mimetypes_file && !isFile(st.mimetypes_file)) add(errs, 'storage.mimetypes_file', `${st.mimetypes_file} does not exist`);
  if (!st.disk.dir.trim()) add(errs, 'storage.disk.dir', 'must not be empty');
  if (!cfg.db.dir.trim()) add(errs, 'db.dir', 'must not be empty');
  if (st.memory.auth.enable && (!st.memory.auth.username || !st.memory.auth.password)) {
    add(errs, 'storage.memory.auth.enable', 'username and password must be set when memfs auth is enabled');
  }
  for (const o of st.cors.origins) {
    if (!o.includes('*') && !/^https?:\/\//.test(o)) add(errs, 'storage.cors.origins', `'${o}' is not a valid origin`);
  }
  for (const [k, v] of [['storage.memory.max_size_mbytes', st.memory.max_size_mbytes], ['storage.disk.max_size_mbytes', st.disk.max_size_mbytes], ['log.max_lines', cfg.log.max_lines], ['encoder.max_processes', cfg.encoder.max_processes]] as const) {
    if (v < 0) add(errs, k, 'must not be negative');
  }
  if (st.disk.cache.ttl_seconds < 0) add(errs, 'storage.disk.cache.ttl_seconds', 'must not be negative');
  if (!cfg.encoder.binary.trim()) add(errs, 'encoder.binary', 'must not be empty');
  else if (!findExecutable(cfg.encoder.binary)) add(errs, 'encoder.binary', `${cfg.encoder.binary} is not an executable (install the Debian package ffmpeg)`);
  for (const dir of ['input', 'output'] as const) {
    for (const list of ['allow', 'block'] as const) {
      for (const re of cfg.encoder.access[dir][list]) {
        try { new RegExp(re); } catch { add(errs, `encoder.access.${dir}.${list}`, `'${re}' is not a valid regular expression`); }
      }
    }
  }
  if (cfg.encoder.log.max_lines < 0) add(errs, 'encoder.log.max_lines', 'must not be negative');
  if (cfg.encoder.log.max_history < 0) add(errs, 'encoder.log.max_history', 'must not be negative');
  if (cfg.playout.enable && cfg.playout.min_port >= cfg.playout.max_port) add(errs, 'playout.min_port', 'must be smaller than playout.max_port');
  if (cfg.rtmp.enable && !validAddress(cfg.rtmp.address)) add(errs, 'rtmp.address', `'${cfg.rtmp.address}' is not a host:port address`);
  if (cfg.rtmp.enable_tls) {
    if (!cfg.rtmp.enable || !cfg.tls.enable) add(errs, 'rtmp.enable_tls', 'needs rtmp.enable and tls.enable');
    if (cfg.rtmp.address === cfg.rtmp.address_tls) add(errs, 'rtmp.address_tls', 'must differ from rtmp.address');
  }
  if (!cfg.rtmp.app.startsWith('/')) add(errs, 'rtmp.app', 'must be an absolute path');
  if (cfg.srt.enable && !validAddress(cfg.srt.address)) add(errs, 'srt.address', `'${cfg.srt.address}' is not a host:port address`);
  if (cfg.service.enable && (!cfg.service.token || !cfg.service.url)) add(errs, 'service.enable', 'service.token and service.url must be set');
  if (cfg.router.ui_path && !isDir(cfg.router.ui_path)) add(errs, 'router.ui_path', `${cfg.router.ui_path} is not a directory`);
  if (cfg.metrics.enable) {
    if (cfg.metrics.range_sec <= 0) add(errs, 'metrics.range_sec', 'must be positive');
    if (cfg.metrics.interval_sec <= 0) add(errs, 'metrics.interval_sec', 'must be positive');
    else if (cfg.metrics.interval_sec > cfg.metrics.range_sec) add(errs, 'metrics.interval_sec', 'must not be bigger than metrics.range_sec');
  }
  if (cfg.sessions.session_timeout_sec < 1) add(errs, 'sessions.session_timeout_sec', 'must be at least 1');
  if (cfg.sessions.persist_interval_sec < 0) add(errs, 'sessions.persist_interval_sec', 'must not be negative');
  for (const ip of cfg.sessions.ip_ignorelist) {
    if (!validCidr(ip)) add(errs, 'sessions.ip_ignorelist', `'${ip}' is not a valid CIDR`);
  }
  const loaded = loadedNames(cfg);
  for (const [key, plugin] of Object.entries(ENABLE_KEYS)) {
    if (getPath(cfg, key) === true && !loaded.has(plugin)) {
      add(errs, key, `plugin '${plugin}' is not loaded (add it to 'plugins'; built-ins: ${BUILTIN_PLUGINS.join(', ')})`);
    }
  }
  return errs;
}
