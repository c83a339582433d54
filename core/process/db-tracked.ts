/*
 * Dictionaries of db.json that remember what changed since they were last rendered, so a save
 * after one metadata write touches one block of text instead of walking 5,000 keys
 * (db-text.ts). Only writes are trapped: reads go straight to the dictionary.
 */

/** What changed in a tracked dictionary since the last render. */
export interface Changes {
  /** Keys whose value was replaced (the key existed and still does, in the same place). */
  readonly keys: Set<string>;
  /** Keys were added or removed (or something else a block cannot absorb): render it all. */
  structural: boolean;
}

const changesOf = new WeakMap<object, Changes>();

/** Whether the entry is written to db.json (JSON.stringify leaves these out). */
export const written = (v: unknown) => v !== undefined && typeof v !== 'function';

/**
 * The dictionary behind a proxy that records changes. Mutate the proxy (never the target), as
 * the process engine does through `db.data`.
 */
export function tracked<T>(d: Record<string, T>): Record<string, T> {
  const changes: Changes = { keys: new Set(), structural: true };
  const proxy = new Proxy(d, {
    set(target, key, value) {
      // a replaced value keeps its key's place; anything else changes the key set or order
      if (typeof key === 'string' && Object.hasOwn(target, key) && written(target[key]) && written(value)) changes.keys.add(key);
      else changes.structural = true;
      (target as Record<string | symbol, unknown>)[key] = value;
      return true;
    },
    deleteProperty(target, key) {
      if (Object.hasOwn(target, key)) changes.structural = true;
      return Reflect.deleteProperty(target, key);
    },
    defineProperty(target, key, desc) {
      changes.structural = true;
      return Reflect.defineProperty(target, key, desc);
    },
  });
  changesOf.set(proxy, changes);
  return proxy;
}

/** The changes of a tracked dictionary (undefined for a plain one: render it all). */
export function changes(d: object): Changes | undefined {
  return changesOf.get(d);
}
