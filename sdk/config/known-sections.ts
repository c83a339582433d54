import type { ConfigData } from './index.ts';
import { ConfigErrorList, validCidr, validAddress, type ConfigErrors } from './checks.ts';

/**
 * Rules of the sections whose plugins are not part of this build yet (srt, playout, metrics,
 * sessions). Clients read and write the full ConfigData, so these sections are accepted and
 * checked as the reference does even without their plugin. When a plugin lands it moves its rules
 * into its own `validate` (and its schema next to it); the core then uses the plugin's and ignores
 * the entry here. Keys are relative to the section.
 */
export interface KnownSection {
  /** The built-in plugin that will own the section. */
  readonly plugin: string;
  /** Dotted path of the section in ConfigData. */
  readonly key: string;
  validate(whole: Readonly<ConfigData>): ConfigErrors;
}

export const KNOWN_SECTIONS: readonly KnownSection[] = [
  {
    plugin: 'srt', key: 'srt',
    validate({ srt }) {
      const errs = new ConfigErrorList();
      if (srt.enable && !validAddress(srt.address)) errs.add('address', `'${srt.address}' is not a host:port address`);
      return errs.map;
    },
  },
  {
    plugin: 'playout', key: 'playout',
    validate({ playout }) {
      const errs = new ConfigErrorList();
      if (playout.enable && playout.min_port >= playout.max_port) errs.add('min_port', 'must be smaller than playout.max_port');
      return errs.map;
    },
  },
  {
    plugin: 'metrics', key: 'metrics',
    validate({ metrics }) {
      const errs = new ConfigErrorList();
      if (!metrics.enable) return errs.map;
      if (metrics.range_sec <= 0) errs.add('range_sec', 'must be positive');
      if (metrics.interval_sec <= 0) errs.add('interval_sec', 'must be positive');
      else if (metrics.interval_sec > metrics.range_sec) errs.add('interval_sec', 'must not be bigger than metrics.range_sec');
      return errs.map;
    },
  },
  {
    plugin: 'sessions', key: 'sessions',
    validate({ sessions }) {
      const errs = new ConfigErrorList();
      if (sessions.session_timeout_sec < 1) errs.add('session_timeout_sec', 'must be at least 1');
      if (sessions.persist_interval_sec < 0) errs.add('persist_interval_sec', 'must not be negative');
      for (const ip of sessions.ip_ignorelist) {
        if (!validCidr(ip)) errs.add('ip_ignorelist', `'${ip}' is not a valid CIDR`);
      }
      return errs.map;
    },
  },
];
