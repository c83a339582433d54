import { ApiError, BootError, type StateDocument } from '../../sdk/index.ts';
import type { StateDocumentOptions } from '../../sdk/state.ts';
import { FragmentCache, NotStorable } from './db-text.ts';
import { tracked } from './db-tracked.ts';

/** A process as stored in db.json (reference 10.1): the config as given plus its order. */
export interface StoredProcess {
  id: string;
  reference: string;
  created_at: number;
  updated_at: number;
  order: 'start' | 'stop';
  config: Record<string, unknown>;
  /** Who made it (`ProcessRecord.maker`): asked again at each start. */
  maker?: string;
  /** When its maker asked for it (unix seconds), when not its `updated_at` (a plugin's process: `ProcessesService.put`). */
  maker_since?: number;
}

/** `<db.dir>/db.json`, the process engine's state document (layout version 4). */
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

function emptyDb(): DbData {
  return { version: DB_VERSION, process: tracked(dict()), metadata: { system: tracked(dict()), process: tracked(dict()) } };
}

/** The `db` document with its text cache: `storable` refuses what db.json cannot hold, before it is applied. */
export interface DbHandle {
  readonly options: StateDocumentOptions<DbData>;
  /**
   * Refuses (400) a value that cannot be written to db.json; its text is kept for the next save.
   * `depth` is the value's nesting level in db.json (3 for a metadata value, 2 for a process).
   */
  storable(value: unknown, depth?: number): void;
  /** Bytes of a storable value as db.json writes it at `depth` (the text is cached per stored object). */
  bytes(value: unknown, depth: number): number;
}

/** The process engine's db.json as a state document. */
export type DbDocument = StateDocument<DbData>;

/**
 * How db.json is read and written. A missing file is empty; any other version stops the boot and
 * leaves the file alone (reference 10.1). Dictionaries have no prototype. The text is
 * `JSON.stringify(data, null, 4)` built from fragments cached per stored object, so a save with
 * thousands of processes stringifies only what changed: stored objects are replaced, never
 * mutated in place.
 */
export function dbHandle(): DbHandle {
  const text = new FragmentCache();
  const render = (d: DbData): Buffer[] => {
    const out: Buffer[] = [Buffer.from(`{\n    "version": ${JSON.stringify(d.version)},\n    "process": `)];
    text.dict(d.process, 1, out);
    out.push(Buffer.from(',\n    "metadata": {\n        "system": '));
    text.dict(d.metadata.system, 2, out);
    out.push(Buffer.from(',\n        "process": '));
    text.dict(d.metadata.process, 2, out);
    out.push(Buffer.from('\n    }\n}\n'));
    return out;
  };
  return {
    options: {
      init: emptyDb,
      format: render,
      parse(raw, path) {
        const parsed = raw as Partial<DbData> | null;
        if (parsed === null || typeof parsed !== 'object' || parsed.version !== DB_VERSION) {
          throw new BootError(`unsupported version of ${path} (want: ${DB_VERSION}, have: ${JSON.stringify((parsed as { version?: unknown })?.version ?? null)}); it was left as it is`);
        }
        const data = emptyDb();
        data.process = tracked(dict(parsed.process));
        data.metadata.system = tracked(dict(parsed.metadata?.system));
        const meta = dict(parsed.metadata?.process);
        for (const id of Object.keys(meta)) meta[id] = meta[id] && typeof meta[id] === 'object' ? dict(meta[id]) : null;
        data.metadata.process = tracked(meta);
        // no render here: the process engine replaces every stored process as it restores them
        // and saves at once, which fills the cache (a render here was thrown away: issue 29)
        return data;
      },
    },
    bytes: (value, depth) => Buffer.byteLength(text.fragment(value, depth)),
    storable(value, depth = 3) {
      try {
        text.fragment(value, depth);
      } catch (err) {
        if (!(err instanceof NotStorable)) throw err;
        throw new ApiError(400, 'Invalid JSON', [`the value cannot be stored: ${err.message}`], 'DB_NOT_STORABLE');
      }
    },
  };
}
