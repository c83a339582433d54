import type { PluginDefinition } from '../../sdk/index.ts';
import { processPlugin } from '../process/plugin.ts';

/**
 * Plugins every app mounts, first and whatever `plugins` says: the process engine. They go
 * through the same door as any other plugin (definePlugin, PluginContext); being first, their
 * single-provider deps must be the kernel's own, and what they provide is there for everyone.
 */
export const REQUIRED_PLUGINS: readonly PluginDefinition[] = [processPlugin as PluginDefinition];
