import type { CoreBuild } from '../core/config/build.ts';
import { BUILTINS } from './built-ins.ts';
import { ConfigData } from './config-data.ts';

/**
 * This service's build: every plugin of `plugins/` as a built-in (generated table, `built-ins.ts`)
 * and the whole configuration with their sections (`config-data.ts`). The core gets it from the
 * entry (`cli.ts`) or the test kit; it imports no plugin itself.
 */
export const BUILD: CoreBuild = { builtIns: BUILTINS, configSchema: ConfigData };
