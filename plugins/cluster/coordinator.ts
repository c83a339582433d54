import type { Buckets, Log } from './connection.ts';
import { LeaderLoop, readAssignments } from './leader.ts';
import type { NodesView } from './nodes-view.ts';
import { OwnerAgent, type RunHooks } from './owner-agent.ts';
import type { PlacementNode, PlacementProcess } from './placement.ts';
import { ProcessStore, type SharedProcess } from './process-store.ts';
import type { StoreSync } from './replica.ts';

/** A shared process as placement sees it: its order and the channel it belongs to (reference, domain). */
export function placementProcess(p: SharedProcess): PlacementProcess {
  const reference = p.reference ?? p.config.reference;
  const domain = p.config.domain;
  return {
    id: p.id, order: p.order,
    reference: typeof reference === 'string' ? reference : '',
    domain: typeof domain === 'string' ? domain : '',
  };
}

/**
 * Placement and ownership as they run in every node: the shared process table is watched, the
 * leader runs one placement step per tick, every node reads `core_assign` and its owner agent
 * takes the leases of the processes assigned to it and calls the run hooks. Until the engine is
 * wired the hooks only log (see README); an empty `core_processes` gives empty assignments.
 */
export class Coordinator {
  #store: ProcessStore;
  #loop: LeaderLoop;
  #log: Log;
  #bucket: Buckets;
  #node: string;
  #nodes: NodesView;
  #assignments: Record<string, string> = {};
  #agent: OwnerAgent;
  #sync: StoreSync | undefined;
  #prepared = false;

  constructor(b: Buckets, deps: { node: string; ttlMs: number; onQuorumLoss?: 'stop' | 'keep'; isLeader(): boolean; nodes: NodesView; log: Log; hooks: RunHooks; sync?: StoreSync }) {
    this.#log = deps.log;
    this.#sync = deps.sync;
    this.#node = deps.node;
    this.#nodes = deps.nodes;
    this.#store = new ProcessStore(b.processes);
    this.#loop = new LeaderLoop(b.assign, {
      node: deps.node,
      isLeader: deps.isLeader,
      nodes: () => deps.nodes.live().map((n): PlacementNode => ({
        id: n.id, alive: true, maxProcesses: n.capacity.max_processes, load: n.load.loadavg / Math.max(1, n.capacity.cpus),
      })),
      processes: () => this.#store.list().map((v) => placementProcess(v.process)),
    });
    this.#bucket = b;
    this.#agent = new OwnerAgent(b.owners, {
      node: deps.node, ttlMs: deps.ttlMs, onQuorumLoss: deps.onQuorumLoss, hooks: deps.hooks,
      log: (err, id) => deps.log.warn({ err, process: id }, 'cluster: stopping a process'),
    });
  }

  get store(): ProcessStore { return this.#store; }

  /** One step: (re)start the watcher, place when leading, refresh the assignments. */
  async tick(): Promise<void> {
    // the import (first start in a cluster) precedes the watcher: the engine's processes must be
    // in the store before the watcher's first values decide which of them the cluster lacks
    if (this.#sync && !this.#prepared) { await this.#sync.prepare(this.#bucket.processes, this.#store); this.#prepared = true; }
    // not awaited: the node's tick (lease renewal) must never wait on a watcher's first values
    if (!this.#store.watching) {
      const sync = this.#sync;
      this.#store.watch(sync ? (c) => sync.change(c) : undefined)
        .then(() => { if (this.#store.ready) sync?.ready(); })
        .catch((err) => this.#log.warn({ err }, 'cluster: watching core_processes'));
    }
    // placing from views without their current values would move processes needlessly. The
    // nodes view has them once it shows this node's own announcement: that was put after its
    // watcher started, and a watcher delivers in stream order.
    const ready = this.#store.ready && this.#nodes.live().some((n) => n.id === this.#node);
    const status = ready ? await this.#loop.step() : 'not-ready';
    if (status === 'written') {
      for (const c of this.#loop.last?.changes ?? []) this.#log.info({ ...c }, 'cluster: placement change');
    }
    this.#assignments = (await readAssignments(this.#bucket.assign)).assignments;
    // not awaited either (acquires may be slow); the agent skips a call while one runs
    this.#agent.apply(this.#assignments).catch((err) => this.#log.warn({ err }, 'cluster: applying the assignments'));
  }

  /** Processes this node holds the ownership lease of (and runs). */
  owned(): string[] { return this.#agent.running(); }

  /** Whether this node runs `id` now (assigned, lease held and within its deadline). */
  runs(id: string): boolean { return this.#agent.runs(id); }

  /** The assignments as last read, by process id. */
  assignments(): { process_id: string; node_id: string }[] {
    return Object.keys(this.#assignments).sort().map((id) => ({ process_id: id, node_id: this.#assignments[id]! }));
  }

  /** After a reconnect the watcher's consumer may be gone with the server: start afresh. */
  restart(): void {
    this.#store.stop();
    this.#agent.reconnected().catch((err) => this.#log.warn({ err }, 'cluster: reconciling ownership'));
  }

  /** Stops what runs here (hooks), releases its leases, stops watching. */
  async stop(): Promise<void> {
    this.#store.stop();
    await this.#agent.close().catch((err) => this.#log.warn({ err }, 'cluster: releasing ownership'));
  }
}
