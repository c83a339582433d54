import { createServiceRef } from './refs.ts';
import type { PlaceholderRun } from './run-credentials.ts';

/** Where in a process config a placeholder may be substituted (reference 8.2). */
export type PlaceholderContext = 'global' | 'address' | 'options';

/** Which section a value is resolved for: `output` e.g. makes `{srt}` publish. */
export type PlaceholderSection = 'global' | 'input' | 'output';

/** A placeholder a plugin offers to process configs, e.g. `{memfs}` or `{rtmp,name=..}`. */
export interface PlaceholderDefinition {
  /** Name as written between braces: `memfs`, `fs:mem`, `rtmp`. Lowercase, optional `:suffix`. */
  name: string;
  /** Other names for the same value, e.g. `fs:mem` for `memfs`. */
  aliases?: string[];
  /** Where it is substituted; other places leave it literal. */
  contexts: PlaceholderContext[];
  /** Defaults for template parameters. */
  defaults?: Record<string, string>;
  /**
   * The value, which may hold `{param}` slots filled from the placeholder's parameters
   * (and defaults); slots with no value stay literal. `run` is set when the engine resolves the
   * command of a child it is about to start: a value that reaches one of the service's own
   * listeners carries the run's token there (`runUserinfo(run)`, `?token=<run.token>`), never a
   * configured secret. Without `run` (the command an API view shows for a process that does not
   * run) it carries no credential at all.
   */
  value(section: PlaceholderSection, run?: PlaceholderRun): string;
}

/**
 * The registry of placeholders the process engine resolves.
 *
 * @example
 * ctx.deps.placeholders.register({
 *   name: 'memfs', aliases: ['fs:mem'], contexts: ['address', 'options'],
 *   value: (section, run) => `http://${run ? runUserinfo(run) : ''}localhost:${port}/memfs`,
 * });
 */
export interface PlaceholderRegistry {
  register(def: PlaceholderDefinition): void;
  get(name: string): PlaceholderDefinition | undefined;
  list(): PlaceholderDefinition[];
}

/**
 * The placeholder registry (provided by the core).
 *
 * @example
 * deps: { placeholders: placeholdersRef }
 */
export const placeholdersRef = createServiceRef<PlaceholderRegistry>('placeholders');
