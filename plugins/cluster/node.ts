import { availableParallelism, loadavg } from 'node:os';
import { NatsLink, type Buckets, type Log } from './connection.ts';
import { Coordinator } from './coordinator.ts';
import type { RunHooks } from './owner-agent.ts';
import type { StoreSync } from './replica.ts';
import { LeaderLease } from './lease.ts';
import { NodesView } from './nodes-view.ts';
import type { ClusterConfig, ClusterView, NodeInfo } from './schema.ts';

export interface NodeDeps {
  log: Log;
  nodeId: string;
  version: string;
  /** Processes of this node in the running state. */
  running(): number;
  /** What to do with the processes this node owns (the engine wiring; the plugin logs only). */
  hooks: RunHooks;
  /** The engine wiring's side of the shared process store (`replica.ts`); none in building-block tests. */
  sync?: StoreSync;
  /** IAM's users shared in `core_users` (`users.ts`); none without the iam plugin. */
  users?: { tick(kv: Buckets['users']): Promise<void>; restart(): void };
  /** Stream names this node serves to the other nodes (`relay.ts`), announced with it; none without a stream table. */
  streams?(): string[];
  /** An announcement (or a node's removal) arrived: the relay compares the names the others serve. */
  onNodes?(): void;
  /** Cluster events (`cluster.*`, declared in events.ts); none without the events plugin. */
  emit?(type: string, subject: Record<string, string>, payload?: Record<string, unknown>): void;
}

/**
 * One node of the cluster: announces itself in `core_nodes`, watches the others, takes or
 * renews the leader lease, and runs placement (`coordinator.ts`: the leader's step, the
 * assignments every node shows). Everything happens on one tick every `announce_sec`
 * (sequential, so a slow NATS call never overlaps the next); a reconnect ticks at once so the
 * node re-announces without waiting. No HTTP here: `routes.ts` serves `view()`.
 */
export class ClusterNode {
  #cfg: ClusterConfig;
  #deps: NodeDeps;
  #link: NatsLink;
  #nodes: NodesView;
  #lease: LeaderLease;
  #coordinator: Coordinator | undefined;
  #coordinating: Promise<void> | undefined;
  #startedAt = new Date().toISOString();
  #apiAddress = '';
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #closed = false;
  /** The live nodes at the last tick (id → API address), for joined/left events. */
  #seen = new Map<string, string>();

  constructor(cfg: ClusterConfig, deps: NodeDeps) {
    this.#cfg = cfg;
    this.#deps = deps;
    const ttlMs = cfg.ttl_sec * 1000;
    this.#nodes = new NodesView(ttlMs, () => { try { deps.onNodes?.(); } catch (err) { deps.log.warn({ err }, 'cluster: a nodes listener failed'); } });
    this.#lease = new LeaderLease(deps.nodeId, ttlMs);
    this.#link = new NatsLink({ servers: cfg.servers, name: `core-${deps.nodeId}`, ttlMs, replicas: cfg.replicas }, deps.log,
      (connected) => this.#onLink(connected));
  }

  get id(): string { return this.#deps.nodeId; }

  /** The KV buckets while connected (the proxy reads the cluster's signing key from them). */
  get buckets(): Buckets | undefined { return this.#link.buckets; }

  /** Whether this node runs process `id` now (its ownership lease held). */
  runs(id: string): boolean { return this.#coordinator?.runs(id) ?? false; }

  /** True while this node may act as leader (bounded by its lease deadline). */
  isLeader(): boolean { return this.#lease.isLeader(); }

  /** Starts announcing once the API address is known (the listener is bound). */
  start(apiAddress: string): void {
    this.#apiAddress = apiAddress;
    if (!this.#closed && !this.#timer && !this.#ticking) this.#kick();
  }

  view(): ClusterView {
    return {
      node_id: this.id,
      leader: this.#lease.leader(),
      nodes: this.#nodes.live(),
      assignments: this.#coordinator?.assignments() ?? [],
      health: { nats: this.#link.connected ? 'connected' : 'disconnected', last_error: this.#link.lastError },
    };
  }

  #onLink(connected: boolean): void {
    // the old watcher's consumer may be gone with the server: start a fresh one and re-announce now
    if (connected) { this.#nodes.stop(); this.#coordinator?.restart(); this.#deps.users?.restart(); if (this.#apiAddress) this.#kick(); }
  }

  #kick(): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#ticking) return;
    this.#ticking = this.#tick().finally(() => {
      this.#ticking = undefined;
      if (!this.#closed) this.#timer = setTimeout(() => this.#kick(), this.#cfg.announce_sec * 1000);
    });
  }

  async #tick(): Promise<void> {
    await this.#link.ensure();
    const b = this.#link.buckets;
    if (!b || this.#closed) return;
    // the lease first: its renewal must not wait behind a slow announcement
    try {
      const change = await this.#lease.tick(b.leader);
      if (change === 'took') this.#deps.log.info({ node: this.id }, 'cluster: this node is the leader');
      if (change === 'lost') this.#deps.log.warn({ node: this.id }, 'cluster: this node lost the leader lease');
      if (change === 'took' || change === 'lost') this.#deps.emit?.('cluster.leader', { node: this.id }, { change });
    } catch (err) {
      this.#link.fail('leader lease', err);
    }
    try {
      if (this.#nodes.stalled()) {
        // a stalled consumer: the shared process watcher is likely stuck the same way
        this.#deps.log.warn({ node: this.id }, 'cluster: restarting stalled watchers');
        this.#nodes.stop();
        this.#coordinator?.restart();
        this.#deps.users?.restart();
      }
      if (!this.#nodes.watching) await this.#nodes.start(b.nodes);
      await b.nodes.put(this.id, JSON.stringify(this.#info()));
    } catch (err) {
      this.#link.fail('announcing this node', err);
    }
    this.#membership();
    this.#coordinator ??= new Coordinator(b, {
      node: this.id, ttlMs: this.#cfg.ttl_sec * 1000, onQuorumLoss: this.#cfg.on_quorum_loss, isLeader: () => this.#lease.isLeader(),
      nodes: this.#nodes, log: this.#deps.log, hooks: this.#deps.hooks, sync: this.#deps.sync,
    });
    // placement runs beside the tick, never in it: a slow placement step (NATS stalling) must not
    // delay the next lease renewal past its deadline
    this.#coordinating ??= this.#coordinator.tick()
      .catch((err) => this.#link.fail('placement', err))
      .finally(() => { this.#coordinating = undefined; });
    await this.#deps.users?.tick(b.users).catch((err) => this.#link.fail('sharing the IAM users', err));
  }

  /** `cluster.node.joined` / `left` for the changes of the live view since the last tick. */
  #membership(): void {
    if (!this.#deps.emit) return;
    const now = new Map(this.#nodes.live().map((n) => [n.id, n.api_address]));
    for (const [id, address] of now) if (!this.#seen.has(id)) this.#deps.emit('cluster.node.joined', { node: id }, { api_address: address });
    for (const id of this.#seen.keys()) if (!now.has(id)) this.#deps.emit('cluster.node.left', { node: id });
    this.#seen = now;
  }

  #info(): NodeInfo {
    return {
      id: this.id,
      api_address: this.#apiAddress,
      capacity: { cpus: availableParallelism(), max_processes: this.#cfg.max_processes },
      load: { loadavg: loadavg()[0], processes_running: this.#deps.running() },
      version: this.#deps.version,
      started_at: this.#startedAt,
      ...(this.#deps.streams ? { streams: this.#deps.streams() } : {}),
    };
  }

  /** Stops ticking, leaves the cluster (lease released, announcement deleted) and disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#ticking;
    await this.#coordinating;
    this.#nodes.stop();
    await this.#coordinator?.stop();
    this.#deps.users?.restart();
    const b = this.#link.buckets;
    if (b) {
      // a graceful leave: the others need not wait for ttl to take the lease or drop this node
      await this.#lease.release(b.leader).catch((err) => this.#link.fail('releasing the leader lease', err));
      await b.nodes.delete(this.id).catch(() => {});
    }
    await this.#link.close();
  }
}
