import type { KV } from 'nats';
import type { ProcessRecord, ProcessReplicaService, ProcessWrite } from '../../sdk/index.ts';
import type { Log } from './connection.ts';
import { clusterErrors, isConflict } from './errors.ts';
import { importOnce } from './import.ts';
import type { ProcessChange, ProcessStore, SharedProcess } from './process-store.ts';

/** A record as `core_processes` keeps it. */
export function toShared(r: ProcessRecord): SharedProcess {
  return {
    id: r.id, order: r.order, config: r.config, metadata: r.metadata, updated_at: r.updated_at, created_at: r.created_at, reference: r.reference,
    ...(r.maker === undefined ? {} : { maker: r.maker }),
    ...(r.maker_since === undefined ? {} : { maker_since: r.maker_since }),
  };
}

/** A shared value as the engine takes it; values written before created_at/reference existed get defaults. */
export function toRecord(p: SharedProcess): ProcessRecord {
  const ref = p.reference ?? p.config.reference;
  return {
    id: p.id, reference: typeof ref === 'string' ? ref : '', order: p.order, config: p.config,
    metadata: p.metadata ?? null, created_at: p.created_at ?? p.updated_at, updated_at: p.updated_at,
    ...(typeof p.maker === 'string' ? { maker: p.maker } : {}),
    ...(Number.isSafeInteger(p.maker_since) ? { maker_since: p.maker_since } : {}),
  };
}

/** What the coordinator tells the replica about the shared store (`coordinator.ts`). */
export interface StoreSync {
  /** Once, before the first watcher starts (retried by the next tick when it throws). */
  prepare(kv: KV, store: ProcessStore): Promise<void>;
  /** Every change the watcher delivers (also this node's own writes coming back). */
  change(c: ProcessChange): void;
  /** The watcher delivered its current values (after each start). */
  ready(): void;
}

/**
 * The engine wiring: the process engine (`processReplicaRef`) writes every API change into
 * `core_processes` with compare-and-swap before acknowledging it, and every node's watcher feeds
 * the changes back into its engine (`apply`/`drop`, in order, one at a time). Which node RUNS a
 * process is not decided here: `runs` is the owner agent's lease, and the run hooks call `rerun`.
 */
export class Replica implements StoreSync {
  #engine: ProcessReplicaService;
  #node: string;
  #log: Log;
  #store: ProcessStore | undefined;
  /** Revisions this node wrote, newer than its watcher view may show yet (two writes in a row). */
  #written = new Map<string, number>();
  /** Ids this node wrote since it started: never dropped by the start-up reconciliation. */
  #touched = new Set<string>();
  #queue: Promise<void> = Promise.resolve();
  #reconciled = false;

  constructor(engine: ProcessReplicaService, opts: { node: string; log: Log; runs(id: string): boolean }) {
    this.#engine = engine;
    this.#node = opts.node;
    this.#log = opts.log;
    engine.attach({ write: (c) => this.write(c), runs: opts.runs });
  }

  /** `runs(id)` changed (the owner agent took or gave up the lease): start or stop it here. */
  rerun(id: string): Promise<void> { return this.#engine.rerun(id); }

  /** The first start in a cluster imports this node's processes (db.json) once (`import.ts`). */
  async prepare(kv: KV, store: ProcessStore): Promise<void> {
    this.#store = store;
    const r = await importOnce(kv, store, this.#node, this.#engine.records().map(toShared));
    if (r.status === 'imported') this.#log.info({ added: r.added.length, kept: r.kept.length }, 'cluster: imported this node\'s processes');
  }

  change(c: ProcessChange): void {
    const id = c.type === 'delete' ? c.id : c.process.id;
    // a newer view than this node's own last write: the view's revision is the one to name
    if ((this.#written.get(id) ?? 0) <= c.revision) this.#written.delete(id);
    this.#enqueue(`applying ${c.type} of ${id}`, () => c.type === 'delete' ? this.#engine.drop(id) : this.#engine.apply(toRecord(c.process)));
  }

  /**
   * Once: processes the engine has that the shared store does not were deleted in the cluster
   * while this node was away (or never imported: the import ran before): dropped here. Each is
   * read from the store first, so a process created just now is never dropped by a stale view.
   */
  ready(): void {
    if (this.#reconciled) return;
    this.#reconciled = true;
    this.#enqueue('dropping processes the cluster does not have', async () => {
      for (const r of this.#engine.records()) {
        if (this.#store?.find(r.id) || this.#touched.has(r.id)) continue;
        if (!await this.#store?.get(r.id) && !this.#touched.has(r.id)) await this.#engine.drop(r.id);
      }
    });
  }

  /** The engine's write: a compare-and-swap on `core_processes`; a lost race is a 409. */
  async write(c: ProcessWrite): Promise<void> {
    const store = this.#store;
    if (!store) throw clusterErrors.unavailable('the cluster store is not open yet');
    try {
      if (c.kind === 'delete') {
        this.#touched.add(c.id);
        await store.delete(c.id, this.#revision(store, c.id));
        this.#written.delete(c.id);
        return;
      }
      const p = toShared(c.record);
      this.#touched.add(p.id);
      if (c.previousId !== undefined && c.previousId !== p.id) return await this.#rename(store, p, c.previousId);
      // an add never overwrites: an id another node created before this view saw it is a conflict
      const rev = c.created ? undefined : this.#revision(store, p.id);
      this.#written.set(p.id, rev === undefined ? await store.create(p) : await store.update(p, rev));
    } catch (err) {
      if (isConflict(err)) throw err;
      throw clusterErrors.unavailable((err as Error)?.message ?? String(err));
    }
  }

  /** A rename: the new id is created, then the old one deleted; if that loses, the new one goes again. */
  async #rename(store: ProcessStore, p: SharedProcess, previousId: string): Promise<void> {
    this.#touched.add(previousId);
    this.#written.set(p.id, await store.create(p));
    try {
      await store.delete(previousId, this.#revision(store, previousId));
      this.#written.delete(previousId);
    } catch (err) {
      await store.delete(p.id, this.#written.get(p.id)).catch(() => {});
      this.#written.delete(p.id);
      throw err;
    }
  }

  /** The revision a write must name: the newer of the watcher view and this node's last write. */
  #revision(store: ProcessStore, id: string): number | undefined {
    const rev = Math.max(store.find(id)?.revision ?? 0, this.#written.get(id) ?? 0);
    return rev === 0 ? undefined : rev;
  }

  #enqueue(what: string, fn: () => Promise<void>): void {
    this.#queue = this.#queue.then(fn).catch((err) => this.#log.warn({ err }, `cluster: ${what}`));
  }

  /** Resolves once every change delivered so far reached the engine. */
  settled(): Promise<void> { return this.#queue; }
}
