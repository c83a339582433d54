import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BootError, writeFileAtomic } from '../../sdk/index.ts';

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

/**
 * `<db.dir>/db.json`: loaded at start, written atomically after every change. Concurrent
 * saves are coalesced: each caller's promise settles after a write that contains its change.
 */
export class DbStore {
  readonly path: string;
  data: DbData;
  #writing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  private constructor(path: string, data: DbData) {
    this.path = path;
    this.data = data;
  }

  static async open(dir: string): Promise<DbStore> {
    const path = join(dir, 'db.json');
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
    data.process = parsed.process ?? {};
    data.metadata.system = parsed.metadata?.system ?? {};
    data.metadata.process = parsed.metadata?.process ?? {};
    return new DbStore(path, data);
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

  async #write(): Promise<void> {
    await writeFileAtomic(this.path, JSON.stringify(this.data, null, 4) + '\n');
  }
}

function emptyDb(): DbData {
  return { version: DB_VERSION, process: {}, metadata: { system: {}, process: {} } };
}
