import type { ConfigData } from './index.ts';
import { ConfigErrorList, validAddress, type ConfigErrors } from './checks.ts';

/**
 * Rules of the sections whose plugins are not part of this build yet (rtmp, srt,
 * playout). Clients read and write the full ConfigData, so these sections are accepted and
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
    plugin: 'rtmp', key: 'rtmp',
    validate({ rtmp, tls }) {
      const errs = new ConfigErrorList();
      if (rtmp.enable && !validAddress(rtmp.address)) errs.add('address', `'${rtmp.address}' is not a host:port address`);
      if (rtmp.enable_tls) {
        if (!rtmp.enable || !tls.enable) errs.add('enable_tls', 'needs rtmp.enable and tls.enable');
        if (rtmp.address === rtmp.address_tls) errs.add('address_tls', 'must differ from rtmp.address');
      }
      if (!rtmp.app.startsWith('/')) errs.add('app', 'must be an absolute path');
      return errs.map;
    },
  },
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
];
