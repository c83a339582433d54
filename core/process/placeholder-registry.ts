import type { PlaceholderDefinition, PlaceholderRegistry } from '../../sdk/index.ts';

const NAME = /^[a-z]+(:[0-9A-Za-z]+)?$/;

/** The placeholders plugins register (`{memfs}`, `{rtmp,name=..}`, ...), looked up by name or alias. */
export class Placeholders implements PlaceholderRegistry {
  readonly #byName = new Map<string, PlaceholderDefinition>();

  register(def: PlaceholderDefinition): void {
    for (const name of [def.name, ...(def.aliases ?? [])]) {
      if (!NAME.test(name)) throw new Error(`invalid placeholder name '${name}'`);
      if (this.#byName.has(name)) throw new Error(`placeholder '{${name}}' is already registered`);
      this.#byName.set(name, def);
    }
  }

  get(name: string): PlaceholderDefinition | undefined {
    return this.#byName.get(name);
  }

  list(): PlaceholderDefinition[] {
    return [...new Set(this.#byName.values())];
  }
}
