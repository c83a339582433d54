import type { KV } from 'nats';
import { KvTable, type Revised } from './kv-table.ts';

/** A process as the cluster shares it in `core_processes`: config, metadata and desired order. */
export interface SharedProcess {
  id: string;
  order: 'start' | 'stop';
  /** The process config as the API takes it (the engine validates it, this store does not). */
  config: Record<string, unknown>;
  metadata: Record<string, unknown> | null;
  /** Unix seconds of the last write. */
  updated_at: number;
  /** Unix seconds of the creation; absent in values written before the engine was wired. */
  created_at?: number;
  /** The process's reference (also in `config`); absent in older values. */
  reference?: string;
  /** Who made it and, when not at `updated_at`, since when (`ProcessRecord.maker`): the node that runs it asks again at each start. */
  maker?: string;
  maker_since?: number;
}

/** A process with the KV revision it was read at: the revision a later `update` must name. */
export interface Versioned { process: SharedProcess; revision: number }

export type ProcessChange =
  | { type: 'add' | 'update'; process: SharedProcess; revision: number }
  /** `revision`: of the delete marker (MAX_SAFE_INTEGER for a key found gone by a watcher restart). */
  | { type: 'delete'; id: string; revision: number };

/**
 * The shared process table (no HTTP here), a `KvTable` of `p.` keys: every write is a
 * compare-and-swap: `create` for a new id, `update` with the revision the caller read; losing a
 * race throws `clusterErrors.conflict` (409, `CLUSTER_CONFLICT`) instead of overwriting another
 * node's change. `watch` keeps an in-memory view (current values first, then every change) and
 * calls back per change.
 */
export class ProcessStore {
  readonly #t: KvTable<SharedProcess>;

  constructor(kv: KV) { this.#t = new KvTable<SharedProcess>(kv, 'p', 'process'); }

  async get(id: string): Promise<Versioned | undefined> {
    return versioned(await this.#t.get(id));
  }

  /** Adds a process; a conflict when the id exists. Returns the new revision. */
  create(p: SharedProcess): Promise<number> { return this.#t.create(p.id, p); }

  /** Replaces a process read at `revision`; a conflict when it changed (or went) since. */
  update(p: SharedProcess, revision: number): Promise<number> { return this.#t.update(p.id, p, revision); }

  /** Deletes a process; with `revision`, only if unchanged since it was read at it. */
  delete(id: string, revision?: number): Promise<void> { return this.#t.delete(id, revision); }

  /** The view the watcher keeps, by id (empty before `watch`). */
  list(): Versioned[] { return this.#t.list().map((r) => versioned(r)!); }
  find(id: string): Versioned | undefined { return versioned(this.#t.find(id)); }

  /**
   * Starts (or restarts, e.g. after a reconnect) the watcher; resolves once the current values
   * are in the view. A restart reports only what changed relative to the view it had.
   */
  watch(onChange: (c: ProcessChange) => void = () => {}): Promise<void> {
    return this.#t.watch((c) => onChange(c.type === 'delete' ? c : { type: c.type, process: c.value, revision: c.revision }));
  }

  /** A watcher runs or is being started. */
  get watching(): boolean { return this.#t.watching; }
  /** True once the watcher delivered the current values: before that the view may lack processes. */
  get ready(): boolean { return this.#t.ready; }

  stop(): void { this.#t.stop(); }
}

const versioned = (r: Revised<SharedProcess> | undefined): Versioned | undefined => (r ? { process: r.value, revision: r.revision } : undefined);
