import type { KV, KvEntry, QueuedIterator } from 'nats';
import type { NodeInfo } from './schema.ts';

interface Seen { info: NodeInfo; seenAt: number }

/**
 * The live nodes, kept by a watcher on `core_nodes`. JetStream drops an expired announcement
 * without telling watchers (no delete marker before nats-server 2.11), so a node also leaves
 * the view once ttl passed since its last announcement arrived here: that is measured on this
 * node's monotonic clock, minus the age the server gives the entry when it is first seen.
 */
export class NodesView {
  #ttlMs: number;
  #entries = new Map<string, Seen>();
  #iter: QueuedIterator<KvEntry> | undefined;
  #lastEntryAt = 0;
  #onApply: (() => void) | undefined;

  /** `onApply` is called after each announcement or removal the watcher delivers. */
  constructor(ttlMs: number, onApply?: () => void) { this.#ttlMs = ttlMs; this.#onApply = onApply; }

  get watching(): boolean { return this.#iter !== undefined; }

  /**
   * True when the watcher delivered nothing for a ttl although this node announces itself every
   * tick: its consumer stalled (it lived on a server that is gone, and the client has not noticed)
   * and must be restarted.
   */
  stalled(now = performance.now()): boolean {
    return this.#iter !== undefined && now - this.#lastEntryAt > this.#ttlMs;
  }

  /** (Re)starts the watcher: current values first, then every change. */
  async start(kv: KV): Promise<void> {
    this.stop();
    const it = await kv.watch();
    this.#iter = it;
    this.#lastEntryAt = performance.now();
    void this.#consume(it);
  }

  async #consume(it: QueuedIterator<KvEntry>): Promise<void> {
    try {
      for await (const e of it) this.#apply(e);
    } catch {
      // a broken watcher is restarted by the next tick
    } finally {
      if (this.#iter === it) this.#iter = undefined;
    }
  }

  #apply(e: KvEntry): void {
    this.#lastEntryAt = performance.now();
    if (e.operation !== 'PUT') { this.#entries.delete(e.key); this.#onApply?.(); return; }
    let info: NodeInfo;
    try { info = e.json<NodeInfo>(); } catch { return; }
    const age = Math.min(this.#ttlMs, Math.max(0, Date.now() - e.created.getTime()));
    this.#entries.set(e.key, { info, seenAt: performance.now() - age });
    this.#onApply?.();
  }

  /** Nodes heard from within ttl, by id. */
  live(now = performance.now()): NodeInfo[] {
    const out: NodeInfo[] = [];
    for (const [k, s] of this.#entries) {
      if (now - s.seenAt >= this.#ttlMs) this.#entries.delete(k);
      else out.push(s.info);
    }
    return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  stop(): void {
    this.#iter?.stop();
    this.#iter = undefined;
  }
}
