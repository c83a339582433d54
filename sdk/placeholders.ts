import { createServiceRef } from './refs.ts';

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
   * (and defaults); slots with no value stay literal.
   */
  value(section: PlaceholderSection): string;
}

/**
 * The registry of placeholders the process engine resolves.
 *
 * @example
 * ctx.deps.placeholders.register({
 *   name: 'memfs', aliases: ['fs:mem'], contexts: ['address', 'options'],
 *   value: () => `http://localhost:${port}/memfs`,
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
