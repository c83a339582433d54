import type { TObject } from '@sinclair/typebox';
import { KernelConfig, type PluginDefinition } from '../../sdk/index.ts';

/** A built-in plugin of a build: its definition (pure data), and whether `"*"` leaves it out. */
export interface BuiltinPlugin { readonly def: PluginDefinition; readonly optIn: boolean }

/**
 * What a build adds to the core: its built-in plugins, in the order `"*"` mounts them (ties of the
 * plugin graph), and the whole configuration's schema (the kernel's sections with each built-in's
 * at its `configKey`). The composition package (`app/build.ts`) makes this service's; the core
 * imports no plugin.
 */
export interface CoreBuild {
  readonly builtIns: readonly BuiltinPlugin[];
  readonly configSchema: TObject;
}

/** The core alone: no built-in plugin, the kernel's sections only (the process engine is the core's). */
export const KERNEL_BUILD: CoreBuild = { builtIns: [], configSchema: KernelConfig };

let current: CoreBuild = KERNEL_BUILD;

/**
 * Makes `build` the one the core plans, loads and validates with, for this process (its entry
 * does it once, before the service starts; `CoreService.start` and the test kit take it too).
 */
export function installBuild(build: CoreBuild): void {
  current = build;
}

/** The build installed (the core alone when none was). */
export function currentBuild(): CoreBuild {
  return current;
}
