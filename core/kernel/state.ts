import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { PluginState, StateDocumentOptions } from '../../sdk/state.ts';
import { JsonDocument } from '../store/json-document.ts';

const NAME = /^[a-z0-9][a-z0-9_-]*$/;

/**
 * The app's state service: the documents every plugin opened, by path, so a name opened twice
 * is one document and close can wait for their writes. Root names (`rootState`) are claimed
 * by one plugin each.
 */
export class StateService {
  readonly #dbDir: string;
  readonly #docs = new Map<string, Promise<JsonDocument<unknown>>>();
  readonly #rootOwners = new Map<string, string>([['config', 'the kernel']]);

  constructor(dbDir: string) {
    this.#dbDir = resolve(dbDir);
  }

  /** `ctx.state` of one plugin; throws when another plugin already claimed one of its root names. */
  forPlugin(plugin: string, rootState: readonly string[] = []): PluginState {
    for (const name of rootState) {
      const owner = this.#rootOwners.get(name);
      if (owner && owner !== plugin) throw new Error(`state document '${name}' is already claimed by ${owner}`);
      if (!NAME.test(name)) throw new Error(`invalid state document name '${name}'`);
      this.#rootOwners.set(name, plugin);
    }
    const root = new Set(rootState);
    const pathOf = (name: string) => {
      if (!NAME.test(name)) throw new Error(`invalid state document name '${name}' (lowercase letters, digits, '-', '_')`);
      return root.has(name) ? resolve(this.#dbDir, `${name}.json`) : resolve(this.#dbDir, 'plugins', plugin, `${name}.json`);
    };
    return {
      remove: async (name: string) => {
        const path = pathOf(name);
        const doc = this.#docs.get(path);
        if (doc) {
          await (await doc.catch(() => undefined))?.settled();
          if (this.#docs.get(path) === doc) this.#docs.delete(path);
        }
        await rm(path, { force: true });
      },
      open: <T>(name: string, opts: StateDocumentOptions<T>) => {
        const path = pathOf(name);
        let doc = this.#docs.get(path);
        if (!doc) {
          doc = JsonDocument.open(path, opts as StateDocumentOptions<unknown>);
          this.#docs.set(path, doc);
          doc.catch(() => this.#docs.delete(path));
        }
        return doc as Promise<JsonDocument<T>>;
      },
    };
  }

  /** Waits until every document's pending writes are on disk (at close, before a reload reads them). */
  async flush(): Promise<void> {
    for (const doc of this.#docs.values()) await (await doc.catch(() => undefined))?.settled();
  }
}
