import type { KV, KvEntry, QueuedIterator } from 'nats';
import { clusterErrors, isWrongRevision } from './errors.ts';
import { idOfKey, processKey } from './keys.ts';

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
}

/** A process with the KV revision it was read at: the revision a later `update` must name. */
export interface Versioned { process: SharedProcess; revision: number }

export type ProcessChange =
  | { type: 'add' | 'update'; process: SharedProcess; revision: number }
  /** `revision`: of the delete marker (MAX_SAFE_INTEGER for a key found gone by a watcher restart). */
  | { type: 'delete'; id: string; revision: number };

/**
 * The shared process table (no HTTP here). Every write is a compare-and-swap: `create` for a new
 * id, `update` with the revision the caller read; losing a race throws `clusterErrors.conflict`
 * (409, `CLUSTER_CONFLICT`) instead of overwriting another node's change. `watch` keeps an
 * in-memory view (current values first, then every change) and calls back per change.
 */
export class ProcessStore {
  #kv: KV;
  #view = new Map<string, Versioned>();
  #iter: QueuedIterator<KvEntry> | undefined;
  #ready = false;
  #starting = false;
  /** Bumped by every start and stop: a start that a stop overtook drops its watcher. */
  #gen = 0;

  constructor(kv: KV) { this.#kv = kv; }

  async get(id: string): Promise<Versioned | undefined> {
    const e = await this.#kv.get(processKey(id));
    return e && e.operation === 'PUT' ? { process: e.json<SharedProcess>(), revision: e.revision } : undefined;
  }

  /** Adds a process; a conflict when the id exists. Returns the new revision. */
  async create(p: SharedProcess): Promise<number> {
    return this.#cas(p.id, () => this.#kv.create(processKey(p.id), JSON.stringify(p)));
  }

  /** Replaces a process read at `revision`; a conflict when it changed (or went) since. */
  async update(p: SharedProcess, revision: number): Promise<number> {
    return this.#cas(p.id, () => this.#kv.update(processKey(p.id), JSON.stringify(p), revision));
  }

  /** Deletes a process; with `revision`, only if unchanged since it was read at it. */
  async delete(id: string, revision?: number): Promise<void> {
    const opts = revision === undefined ? undefined : { previousSeq: revision };
    await this.#cas(id, () => this.#kv.delete(processKey(id), opts));
  }

  async #cas<T>(id: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (isWrongRevision(err)) throw clusterErrors.conflict(`process ${id}`);
      throw err;
    }
  }

  /** The view the watcher keeps, by id (empty before `watch`). */
  list(): Versioned[] { return [...this.#view.values()]; }
  find(id: string): Versioned | undefined { return this.#view.get(id); }

  /**
   * Starts (or restarts, e.g. after a reconnect) the watcher; resolves once the current values
   * are in the view. A restart reports only what changed relative to the view it had.
   */
  async watch(onChange: (c: ProcessChange) => void = () => {}): Promise<void> {
    this.stop();
    const gen = ++this.#gen;
    this.#starting = true;
    let ready!: () => void;
    const initialized = new Promise<void>((r) => { ready = r; });
    const seen = new Set<string>();
    let initial = true;
    const finish = (): void => {
      if (!initial) return;
      initial = false;
      this.#ready = true;
      // a key gone while no watcher ran: the restart's initial values lack it
      for (const id of [...this.#view.keys()]) if (!seen.has(id)) { this.#view.delete(id); onChange({ type: 'delete', id, revision: Number.MAX_SAFE_INTEGER }); }
      ready();
    };
    // the client signals "initialized" either in order within the stream of entries, or (when they
    // all arrived before the subscription returned) at once, before this loop consumed them: then
    // the entries queued at that moment are the current values
    let early = false;
    let inWatch = true;
    let it: QueuedIterator<KvEntry>;
    try {
      it = await this.#kv.watch({ key: 'p.>', initializedFn: () => { if (inWatch) early = true; else finish(); } });
    } catch (err) {
      if (gen === this.#gen) this.#starting = false;
      throw err;
    } finally {
      inWatch = false;
    }
    if (gen !== this.#gen) { it.stop(); return; }
    this.#iter = it;
    this.#starting = false;
    let remaining = early ? it.getPending() : Infinity;
    if (remaining === 0) finish();
    void (async () => {
      try {
        for await (const e of it) {
          const id = idOfKey(e.key);
          if (id !== undefined) {
            if (initial) seen.add(id);
            this.#apply(id, e, onChange);
          }
          if (--remaining === 0) finish();
        }
      } catch { /* a broken watcher is restarted by its owner */ } finally {
        if (this.#iter === it) { this.#iter = undefined; this.#ready = false; }
        ready();
      }
    })();
    await initialized;
  }

  /** A watcher runs or is being started. */
  get watching(): boolean { return this.#starting || this.#iter !== undefined; }
  /** True once the watcher delivered the current values: before that the view may lack processes. */
  get ready(): boolean { return this.#ready && this.#iter !== undefined; }

  #apply(id: string, e: KvEntry, onChange: (c: ProcessChange) => void): void {
    const had = this.#view.get(id);
    if (e.operation !== 'PUT') {
      if (had) { this.#view.delete(id); onChange({ type: 'delete', id, revision: e.revision }); }
      return;
    }
    if (had && had.revision === e.revision) return;
    let process: SharedProcess;
    try { process = e.json<SharedProcess>(); } catch { return; }
    this.#view.set(id, { process, revision: e.revision });
    onChange({ type: had ? 'update' : 'add', process, revision: e.revision });
  }

  stop(): void {
    this.#gen++;
    this.#starting = false;
    this.#ready = false;
    this.#iter?.stop();
    this.#iter = undefined;
  }
}
