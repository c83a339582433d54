import type { KV } from 'nats';
import { isWrongRevision } from './errors.ts';
import { place, type Assignments, type PlacementNode, type PlacementProcess, type PlacementResult } from './placement.ts';

/** The one key of `core_assign`: every assignment in one document, replaced by compare-and-swap. */
export const ASSIGN_KEY = 'assignments';

/**
 * What the leader writes. One document rather than a key per process: a placement step is one
 * atomic compare-and-swap (no half-written step for a node to act on), and the NATS payload limit
 * (1 MB by default) holds tens of thousands of assignments.
 */
export interface AssignDoc {
  /** The node that wrote it, and when (for the cluster view and debugging, never for decisions). */
  leader: string;
  at: string;
  assignments: Record<string, string>;
}

export interface LeaderLoopDeps {
  /** This node's id. */
  node: string;
  /** The lease deadline check (LeaderLease.isLeader): asked before reading and again before writing. */
  isLeader(): boolean;
  nodes(): readonly PlacementNode[];
  processes(): readonly PlacementProcess[];
  threshold?: number;
}

export type StepStatus = 'not-leader' | 'unchanged' | 'written' | 'conflict';

/** The current assignments and the revision a write must name (0: none written yet). */
export async function readAssignments(kv: KV): Promise<{ assignments: Assignments; revision: number }> {
  const e = await kv.get(ASSIGN_KEY);
  if (!e || e.operation !== 'PUT') return { assignments: {}, revision: 0 };
  return { assignments: e.json<AssignDoc>().assignments ?? {}, revision: e.revision };
}

/**
 * The leader's placement step: read the assignments, run `place`, write the result with
 * compare-and-swap at the revision read. Runs only while the leadership deadline holds, checked
 * again right before the write: a node whose lease lapsed mid-step writes nothing. If two nodes
 * believe they lead (an old leader not yet past its deadline, a new one), both read the same
 * revision and only the first write succeeds: the other gets 'conflict' and re-reads next time.
 * The caller runs `step` on its tick (the same one that renews the lease).
 */
export class LeaderLoop {
  #kv: KV;
  #deps: LeaderLoopDeps;
  #last: PlacementResult | undefined;

  constructor(kv: KV, deps: LeaderLoopDeps) {
    this.#kv = kv;
    this.#deps = deps;
  }

  /** The result of the last step that placed (for the cluster view: unplaced processes). */
  get last(): PlacementResult | undefined { return this.#last; }

  async step(): Promise<StepStatus> {
    if (!this.#deps.isLeader()) return 'not-leader';
    const { assignments, revision } = await readAssignments(this.#kv);
    const r = place(this.#deps.nodes(), this.#deps.processes(), assignments, { threshold: this.#deps.threshold });
    this.#last = r;
    if (r.changes.length === 0 && revision !== 0) return 'unchanged';
    if (!this.#deps.isLeader()) return 'not-leader';
    const doc: AssignDoc = { leader: this.#deps.node, at: new Date().toISOString(), assignments: r.assignments };
    try {
      if (revision === 0) await this.#kv.create(ASSIGN_KEY, JSON.stringify(doc));
      else await this.#kv.update(ASSIGN_KEY, JSON.stringify(doc), revision);
      return 'written';
    } catch (err) {
      if (isWrongRevision(err)) return 'conflict';
      throw err;
    }
  }
}
