import type { KV } from 'nats';
import { Ownership, type LostReason } from './ownership.ts';

/** What a node does with the processes it owns: the process engine, once wired (see README). */
export interface RunHooks {
  /** Called only after this node acquired the lease of `id`. */
  start(id: string): void | Promise<void>;
  /** Called before the lease is released, or when it was lost (then at once, before it can expire). */
  stop(id: string, why: 'moved' | LostReason): void | Promise<void>;
}

/**
 * Turns assignments into running processes on this node, with the ownership leases in between:
 * a process assigned here starts only once its lease is acquired (the previous owner released
 * it or it expired), and one assigned elsewhere is stopped BEFORE its lease is released, so its
 * new owner can never start while it still runs here. A lost lease (fence deadline, taken)
 * stops at once through `onLost`. Call `apply` with the current assignments on every tick, and
 * `reconnected` after a NATS reconnect.
 */
export class OwnerAgent {
  #node: string;
  #hooks: RunHooks;
  #own: Ownership;
  #running = new Set<string>();
  #busy = false;

  constructor(kv: KV, opts: { node: string; ttlMs: number; renewMs?: number; onQuorumLoss?: 'stop' | 'keep'; hooks: RunHooks; log?: (err: unknown, id: string) => void }) {
    this.#node = opts.node;
    this.#hooks = opts.hooks;
    this.#own = new Ownership(kv, {
      node: opts.node, ttlMs: opts.ttlMs, renewMs: opts.renewMs, onQuorumLoss: opts.onQuorumLoss,
      onLost: (id, reason) => { if (this.#running.delete(id)) void Promise.resolve(this.#hooks.stop(id, reason)).catch((err) => opts.log?.(err, id)); },
    });
    this.#own.start();
  }

  /** Processes running here (their leases held). */
  running(): string[] { return [...this.#running].sort(); }

  /** Whether `id` runs here: started by this agent and its lease within the fence deadline. */
  runs(id: string): boolean { return this.#running.has(id) && this.#own.holds(id); }

  /** One reconciliation with `assignments` (process id → node id); overlapping calls are skipped. */
  async apply(assignments: Readonly<Record<string, string>>): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      for (const id of this.running()) {
        if (!this.#own.holds(id)) { this.#running.delete(id); await this.#hooks.stop(id, 'deadline'); continue; }
        if (assignments[id] === this.#node) continue;
        this.#running.delete(id);
        await this.#hooks.stop(id, 'moved');
        await this.#own.release(id);
      }
      for (const [id, node] of Object.entries(assignments)) {
        if (node !== this.#node || this.#running.has(id)) continue;
        // false while the previous owner holds it: retried on the next call
        if (!await this.#own.acquire(id).catch(() => false)) continue;
        this.#running.add(id);
        await this.#hooks.start(id);
      }
    } finally {
      this.#busy = false;
    }
  }

  /** After a reconnect: leases taken meanwhile are lost (their processes stop via onLost). */
  async reconnected(): Promise<void> { await this.#own.reconcile(); }

  /** Stops everything running here and gives the leases up (a graceful leave). */
  async close(): Promise<void> {
    for (const id of this.running()) { this.#running.delete(id); await this.#hooks.stop(id, 'moved'); }
    await this.#own.close(true);
  }
}
