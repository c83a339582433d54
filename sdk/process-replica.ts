import { createServiceRef } from './refs.ts';
import type { ProcessOrder } from './process.ts';

/** A process in its stored form, as a node shares it with others (db.json's entry plus metadata). */
export interface ProcessRecord {
  id: string;
  reference: string;
  order: ProcessOrder;
  /** The config as db.json stores it (the engine reads it back as it restores db.json). */
  config: Record<string, unknown>;
  /** The process's metadata (`PUT /api/v3/process/{id}/metadata/{key}`); null when none. */
  metadata: Record<string, unknown> | null;
  /** Unix seconds. */
  created_at: number;
  updated_at: number;
  /** Who made it (`request.auth.user` of its last create or update, when an access plugin decided it): asked again at each start (`httpHooksRef.processUseBy`). */
  maker?: string;
  /** When the maker asked for it (unix seconds), when that is not `updated_at` (a plugin acting for a user: `ProcessesService.put`). */
  maker_since?: number;
}

/** A change the API made, about to be acknowledged. */
export type ProcessWrite =
  /**
   * An add (`created`: the id must be new in the shared store; an id another node created just
   * now is a conflict, never an overwrite), a replace (`previousId` when a PUT renamed it), an
   * order or a metadata change.
   */
  | { kind: 'put'; record: ProcessRecord; previousId?: string; created?: boolean }
  | { kind: 'delete'; id: string };

/** What a plugin that shares the processes between nodes gives the engine (`attach`). */
export interface ProcessReplication {
  /**
   * Called before the engine acknowledges a change, before db.json is written: the shared store
   * takes it or the call throws an ApiError (e.g. 409 when another node changed the process
   * first), and then nothing changes here.
   */
  write(change: ProcessWrite): Promise<void>;
  /** Whether this node runs `id` (order `start` alone is not enough: the owner runs it). */
  runs(id: string): boolean;
}

/**
 * The engine's side of sharing processes between nodes (provided by the core; used by the
 * cluster plugin). Without an attached replication nothing changes: db.json is the store and every
 * process with order `start` runs here.
 *
 * @example
 * deps: { replica: processReplicaRef },
 * setup(ctx) {
 *   ctx.deps.replica.attach({ write: (c) => store.write(c), runs: (id) => owned.has(id) });
 *   store.onChange((r) => ctx.deps.replica.apply(r));
 * }
 */
export interface ProcessReplicaService {
  /**
   * From now on every API change goes through `r.write` first, and a process runs only where
   * `r.runs(id)` says so. One replication at most; attach in `setup`.
   */
  attach(r: ProcessReplication): void;
  /** Every process in its stored form (e.g. to import a node's db.json into the shared store). */
  records(): ProcessRecord[];
  /**
   * A change made on another node: adds or replaces the process here without writing it back.
   * An unchanged config keeps the running process (only order and metadata follow); a changed
   * one replaces it, started when its order is `start` and `runs(id)`. A definition that does not
   * resolve here is kept, like one restored from db.json.
   */
  apply(record: ProcessRecord): Promise<void>;
  /** A delete made on another node (nothing is written back). */
  drop(id: string): Promise<void>;
  /** `runs(id)` changed: starts the process (order `start`) or stops it, keeping its order. */
  rerun(id: string): Promise<void>;
}

/**
 * The engine's replication seam (single provider: the core).
 *
 * @example
 * deps: { replica: processReplicaRef },
 * setup(ctx) { const ids = ctx.deps.replica.records().map((r) => r.id); }
 */
export const processReplicaRef = createServiceRef<ProcessReplicaService>('process-replica');
