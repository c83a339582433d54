import { BootError, type StateDocumentOptions } from '../../sdk/index.ts';

/** A process as stored in db.json (reference 10.1): the config as given plus its order. */
export interface StoredProcess {
  id: string;
  reference: string;
  created_at: number;
  updated_at: number;
  order: 'start' | 'stop';
  config: Record<string, unknown>;
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

function emptyDb(): DbData {
  return { version: DB_VERSION, process: {}, metadata: { system: {}, process: {} } };
}

/**
 * How the process engine's `db` document is read: a missing file is empty, any other version
 * stops the boot and leaves the file alone (reference 10.1).
 */
export const dbDocument: StateDocumentOptions<DbData> = {
  init: emptyDb,
  parse(raw, path) {
    const parsed = raw as Partial<DbData> | null;
    if (parsed === null || typeof parsed !== 'object' || parsed.version !== DB_VERSION) {
      throw new BootError(`unsupported version of ${path} (want: ${DB_VERSION}, have: ${JSON.stringify((parsed as { version?: unknown })?.version ?? null)}); it was left as it is`);
    }
    const data = emptyDb();
    data.process = parsed.process ?? {};
    data.metadata.system = parsed.metadata?.system ?? {};
    data.metadata.process = parsed.metadata?.process ?? {};
    return data;
  },
};
