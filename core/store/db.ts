import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError, BootError, writeFileAtomic } from '../../sdk/index.ts';
import { FragmentCache, NotStorable } from './db-text.ts';
import { removeStaleTemps } from './stale-temps.ts';

/** A process as stored in db.json (reference 10.1): the config as given plus its order. */
export interface StoredProcess {
  id: string;
  reference: string;
  created_at: number;
  updated_at: number;
  order: 'start' | 'stop';
  config: Record<string, unknown>;
}

export interface DbData {
  version: 4;
  process: Record<string, StoredProcess>;
  metadata: {
    system: Record<string, unknown>;
    process: Record<string, Record<string, unknown> | null>;
  };
}

export const DB_VERSION = 4;

/** A dictionary without a prototype: `__proto__` or `toString` are plain keys, never inherited. */
export function dict<T>(from?: Record<string, T> | null): Record<string, T> {
  const d = Object.create(null) as Record<string, T>;
  if (from && typeof from === 'object') for (const k of Object.keys(from)) d[k] = from[k]!;
  return d;
}

/** Own-property lookup (also safe on objects that still have a prototype). */
export function own<T>(d: Record<string, T> | null | undefined, key: string): T | undefined {
  return d && Object.prototype.hasOwnProperty.call(d, key) ? d[key] : undefined;
}

/**
 * `<db.dir>/db.json`: loaded at start, written atomically after every change. Concurrent
 * saves are coalesced: each caller's promise settles after a write that contains its change.
 * Stored objects are replaced, never mutated in place (see FragmentCache). Dictionaries have no
 * prototype. Changes go through `storable` (checked before they are applied) and `commit`
 * (undone when the write fails), so memory and disk never disagree.
 */
export class DbStore {
  readonly path: string;
  data: DbData;
  readonly #text = new FragmentCache();
  #writing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  private constructor(path: string, data: DbData) {
    this.path = path;
    this.data = data;
  }

  static async open(dir: string): Promise<DbStore> {
    const path = join(dir, 'db.json');
    // nothing writes yet: temp files of a killed writer are leftovers
    await removeStaleTemps(dir, 'db.json');
    let text: string | undefined;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new BootError(`cannot read ${path}: ${(err as Error).message}`);
      }
    }
    if (text === undefined || text.trim() === '') {
      const store = new DbStore(path, emptyDb());
      await store.save();
      return store;
    }
    let parsed: Partial<DbData>;
    try {
      parsed = JSON.parse(text) as Partial<DbData>;
    } catch (err) {
      throw new BootError(`${path} is not valid JSON (${(err as Error).message}); it was left as it is: repair or move it away`);
    }
    if (parsed === null || typeof parsed !== 'object' || parsed.version !== DB_VERSION) {
      throw new BootError(`unsupported version of ${path} (want: ${DB_VERSION}, have: ${JSON.stringify((parsed as { version?: unknown })?.version ?? null)}); it was left as it is`);
    }
    const data = emptyDb();
    data.process = dict(parsed.process);
    data.metadata.system = dict(parsed.metadata?.system);
    const meta = dict(parsed.metadata?.process);
    for (const id of Object.keys(meta)) meta[id] = meta[id] && typeof meta[id] === 'object' ? dict(meta[id]) : null;
    data.metadata.process = meta;
    const store = new DbStore(path, data);
    // fills the fragment cache at start, so the first change does not stringify everything
    store.render();
    return store;
  }

  /**
   * Refuses (400) a value that cannot be written to db.json, before it is applied; the text is
   * kept for the next save. `depth` is the value's nesting level in db.json (3 for a metadata value).
   */
  storable(value: unknown, depth = 3): void {
    try {
      this.#text.fragment(value, depth);
    } catch (err) {
      if (!(err instanceof NotStorable)) throw err;
      throw new ApiError(400, 'Invalid JSON', [`the value cannot be stored: ${err.message}`], 'DB_NOT_STORABLE');
    }
  }

  /** Applies a change and saves it; when the save fails the change is undone and the error thrown. */
  async commit(apply: () => (() => void) | void): Promise<void> {
    const undo = apply();
    try {
      await this.save();
    } catch (err) {
      undo?.();
      throw err;
    }
  }

  /** Persists the current data. Resolves once a write that includes all changes so far is on disk. */
  save(): Promise<void> {
    if (!this.#writing) {
      this.#writing = this.#write().finally(() => { this.#writing = undefined; });
      return this.#writing;
    }
    if (!this.#queued) {
      this.#queued = this.#writing.catch(() => {}).then(() => {
        this.#queued = undefined;
        return this.save();
      });
    }
    return this.#queued;
  }

  /** The file's text: `JSON.stringify(data, null, 4)`, from cached fragments. */
  render(): string {
    const d = this.data;
    return `{\n    "version": ${JSON.stringify(d.version)},\n    "process": ${this.#text.dict(d.process, 1)},\n`
      + `    "metadata": {\n        "system": ${this.#text.dict(d.metadata.system, 2)},\n`
      + `        "process": ${this.#text.dict(d.metadata.process, 2)}\n    }\n}\n`;
  }

  async #write(): Promise<void> {
    await writeFileAtomic(this.path, this.render());
  }
}

function emptyDb(): DbData {
  return { version: DB_VERSION, process: dict(), metadata: { system: dict(), process: dict() } };
}
