import { statSync, accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import { delimiter, join } from 'node:path';
import { isListenAddress } from './formats.ts';

/**
 * Building blocks for a plugin's `validate(section, whole)` step: the error map and the value
 * checks the built-in sections share (CIDRs, listen addresses, files, executables).
 */

/** Dotted key -> messages; the body of a 409 ConfigError. */
export type ConfigErrors = Record<string, string[]>;

/**
 * Collects errors under keys relative to a section; `at('')` is the section itself.
 *
 * @example
 * const errs = new ConfigErrorList();
 * if (section.min_port >= section.max_port) errs.add('min_port', 'must be smaller than max_port');
 * return errs.map;
 */
export class ConfigErrorList {
  readonly map: ConfigErrors = {};
  add(key: string, msg: string): void {
    (this.map[key] ??= []).push(msg);
  }
}

export function validCidr(s: string): boolean {
  const [ip, bits, ...rest] = s.split('/');
  if (rest.length || bits === undefined || !/^\d+$/.test(bits)) return false;
  const v = isIP(ip!);
  return v !== 0 && Number(bits) <= (v === 4 ? 32 : 128);
}

/**
 * `host:port` with a numeric port (a bare number means `:port`); the host, when given, an IP
 * address, `[IPv6]` or a host name. The form of the config format `listen-address` (formats.ts).
 */
export function validAddress(s: string): boolean {
  return isListenAddress(s);
}

export function isFile(p: string): boolean {
  try { return statSync(p).isFile(); } catch { return false; }
}

export function isDir(p: string): boolean {
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
