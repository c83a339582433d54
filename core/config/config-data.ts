import type { KernelConfig } from '../../sdk/config/index.ts';

/**
 * The sections a build adds to the configuration, by key: none in the core. The composition package
 * declares its built-ins' sections here (`app/config-data.ts`, generated, merges them into this
 * interface), so that code compiled with it sees `ConfigData.rtmp` typed; the core reads no
 * plugin's section by type.
 */
export interface BuildSections {}

/**
 * The whole configuration (layout version 3 of the reference, section 6.2, plus `plugins`): the
 * kernel's sections and the build's. Its schema is the installed build's (`currentBuild().configSchema`).
 */
export type ConfigData = KernelConfig & BuildSections;
