import type { CoreModule } from './kernel/kernel.ts';
import { processModule } from './process/module.ts';

/**
 * Core modules mounted before the plugins, in this order (they may provide services that
 * plugins need, e.g. `processes`). The process engine adds itself here.
 */
export const CORE_MODULES: CoreModule[] = [processModule];
