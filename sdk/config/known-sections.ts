import type { ConfigData } from './index.ts';
import type { ConfigErrors } from './checks.ts';

/**
 * Rules of the sections whose plugins are not part of this build yet (none at the moment). Clients read
 * and write the full ConfigData, so these sections are accepted and
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
  // empty: every section of this build has its plugin (playout's rules live in plugins/playout/schema.ts)
];
