import { statSync } from 'node:fs';
import { ipFamily } from '../ip.ts';

/**
 * Building blocks for a plugin's `validate(section, whole)` step: the error map and the value
 * checks the built-in sections share (CIDRs, files).
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
  const v = ipFamily(ip!);
  return v !== 0 && Number(bits) <= (v === 4 ? 32 : 128);
}

export function isFile(p: string): boolean {
  try { return statSync(p).isFile(); } catch { return false; }
}
