import type { StateDocument } from '../../sdk/index.ts';
import type { CleanupRunner } from './cleanup.ts';
import type { DbData } from './db-document.ts';
import type { MetadataBudget } from './metadata-budget.ts';
import type { EntryEnv } from './process-entry.ts';
import type { PreSave } from './records.ts';
import type { Logger } from 'pino';

/** What the process manager (manager.ts) is made with. */
export interface ManagerOptions {
  /** The `db` state document (db.json). */
  db: StateDocument<DbData>;
  /** Refuses (400) a value db.json cannot hold, before it is applied (see `dbHandle`). */
  storable(value: unknown, depth?: number): void;
  /** `db.max_metadata_mbytes`: refuses (413) metadata that would grow the total beyond it. */
  metadataBudget?: MetadataBudget;
  log: Logger;
  entryEnv: EntryEnv;
  cleanup: CleanupRunner;
  /** `encoder.max_processes`; 0 = unbounded. */
  maxProcesses: number;
  /** `^<version>` of the installed encoder, recorded in stored configs (reference 7.5 step 2). */
  ffversion(): Promise<string>;
  onDelete(id: string, reference: string): Promise<void>;
  /** Plugins' last word on an add or update, before it is saved: a reason refuses it (400). */
  preSave?: PreSave;
  /** A process was added (saved, not yet started); notify only. */
  onAdd?(id: string, reference: string): void;
  /** A process was replaced (saved, the old one stopped, the new one not yet started); notify only. */
  onUpdate?(id: string, reference: string, previousId: string): void;
  /** A process was added or replaced from the shared store (another node's change, `replica.ts`); notify only. */
  onReplicated?(id: string): void;
  /**
   * Runs once in `startAll`, before any process is started (e.g. a reaper of children a
   * crashed predecessor left behind); a failure is logged and the starts go ahead.
   */
  beforeStart?(): Promise<void>;
}
