import { ConfigErrorList, linearRegex, type ConfigErrors } from '../../sdk/index.ts';
import { EncoderConfig } from '../../sdk/config/sections-b.ts';
import { findExecutable } from '../config/fs-checks.ts';

/**
 * The process engine's section `encoder` (alias `ffmpeg`, kept identical by the core). The schema
 * is `EncoderConfig` of the SDK's config sections (ConfigData is typed there, and `GET
 * /api/v3/config` shows the section whatever is loaded); its rules live here, with the engine,
 * ready to be handed to `definePlugin({ configKey: 'encoder', configSchema: EncoderSection,
 * validate: validateEncoder })`.
 */
export const EncoderSection = EncoderConfig;
export type EncoderSection = EncoderConfig;

/** Rules a schema cannot state; keys relative to `encoder`. */
export function validateEncoder(s: EncoderSection): ConfigErrors {
  const errs = new ConfigErrorList();
  if (s.max_processes < 0) errs.add('max_processes', 'must not be negative');
  if (!s.binary.trim()) errs.add('binary', 'must not be empty');
  else if (!findExecutable(s.binary)) errs.add('binary', `${s.binary} is not an executable (install the Debian package ffmpeg)`);
  for (const dir of ['input', 'output'] as const) {
    for (const list of ['allow', 'block'] as const) {
      for (const re of s.access[dir][list]) {
        if (!linearRegex(re)) errs.add(`access.${dir}.${list}`, `'${re.slice(0, 200)}' is not a valid regular expression (RE2 syntax: no backreferences or lookaround)`);
      }
    }
  }
  if (s.log.max_lines < 0) errs.add('log.max_lines', 'must not be negative');
  if (s.log.max_history < 0) errs.add('log.max_history', 'must not be negative');
  return errs.map;
}
