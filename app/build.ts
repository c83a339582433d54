import type { EventTypeSpec } from '../sdk/index.ts';
import type { CoreBuild } from '../core/config/build.ts';
import { eventCatalogue } from '../core/kernel/event-types.ts';
import { BUILTINS } from './built-ins.ts';
import { ConfigData } from './config-data.ts';

/**
 * This service's build: every plugin of `plugins/` as a built-in (generated table, `built-ins.ts`)
 * and the whole configuration with their sections (`config-data.ts`). The core gets it from the
 * entry (`cli.ts`) or the test kit; it imports no plugin itself.
 */
export const BUILD: CoreBuild = { builtIns: BUILTINS, configSchema: ConfigData };

/**
 * The event catalogue of this build: the core's types and every built-in's `events`, as
 * `GET /api/v3/events/types` lists them when no vendor plugin adds any (the source of the table
 * in CONTRIBUTING.md, `scripts/events-catalogue.ts`).
 */
export const BUILTIN_EVENT_TYPES: readonly EventTypeSpec[] = eventCatalogue(BUILTINS.map((b) => b.def));
