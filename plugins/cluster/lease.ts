import type { KV } from 'nats';
import { isWrongRevision } from './errors.ts';

/** The key of the leader lease in `core_leader`. */
export const LEADER_KEY = 'leader';

/**
 * The leader lease: `create` takes a free (expired or released) key, `update` with the last
 * revision renews it. A node acts as leader only until `renewed_at + ttl/2` on its monotonic
 * clock (`renewed_at` = when the renewal was sent), so it stops before the key can expire on the
 * server and be taken by another node, whatever happens to its connection. Past that deadline it
 * still tries its revision: the compare-and-swap succeeds only if nobody wrote the key since,
 * i.e. nobody else led in between.
 */
export class LeaderLease {
  #id: string;
  #ttlMs: number;
  #rev: number | undefined;
  #renewedAt = -Infinity;
  /** Leadership as last reported by `tick`. */
  #reported = false;
  /** The leader another node holds, as last read, and when. */
  #other: { id: string; seenAt: number } | undefined;

  constructor(id: string, ttlMs: number) {
    this.#id = id;
    this.#ttlMs = ttlMs;
  }

  /** True while this node may act as leader. */
  isLeader(now = performance.now()): boolean {
    return this.#rev !== undefined && now < this.#renewedAt + this.#ttlMs / 2;
  }

  /** The leader's id as this node knows it; null when unknown for a ttl or held by nobody. */
  leader(now = performance.now()): string | null {
    if (this.isLeader(now)) return this.#id;
    const o = this.#other;
    return o && now - o.seenAt < this.#ttlMs ? o.id : null;
  }

  /**
   * One renewal or attempt to take the lease, then a read of who holds it. Returns 'took' or
   * 'lost' when this node's leadership changed since the last report (a lapsed deadline counts).
   * A renewal that fails in transport keeps the revision: the deadline ends leadership, and the
   * next renewal either lands (nobody wrote since) or is refused. A refused one re-reads: a key
   * holding this node's id is its own write whose answer was lost (only this node writes its
   * id), adopted without moving the deadline; anything else means another node leads.
   */
  async tick(kv: KV): Promise<'took' | 'lost' | undefined> {
    const sentAt = performance.now();
    const value = JSON.stringify({ id: this.#id, at: new Date().toISOString() });
    if (this.#rev !== undefined) {
      try {
        this.#rev = await kv.update(LEADER_KEY, value, this.#rev);
        this.#renewedAt = sentAt;
      } catch (err) {
        if (!isWrongRevision(err)) throw err;
        this.#rev = undefined;
      }
    }
    if (this.#rev === undefined) {
      try {
        this.#rev = await kv.create(LEADER_KEY, value);
        this.#renewedAt = sentAt;
      } catch (err) {
        if (!isWrongRevision(err)) throw err;
      }
    }
    if (this.#rev === undefined) {
      const e = await kv.get(LEADER_KEY);
      const id = e && e.operation === 'PUT' ? (e.json<{ id?: string }>().id ?? null) : null;
      // replaced only once read: a view asked during the read still names the leader last seen
      // (a failed read keeps it, until a ttl has passed since it was seen)
      this.#other = id && id !== this.#id ? { id, seenAt: performance.now() } : undefined;
      if (id === this.#id) this.#rev = e!.revision;
    } else {
      this.#other = undefined;
    }
    return this.#transition();
  }

  #transition(): 'took' | 'lost' | undefined {
    const now = this.isLeader();
    if (now === this.#reported) return undefined;
    this.#reported = now;
    return now ? 'took' : 'lost';
  }

  /** Gives the lease up at once (graceful close): another node can take it without waiting for ttl. */
  async release(kv: KV): Promise<void> {
    const rev = this.#rev;
    this.#rev = undefined;
    if (rev !== undefined) await kv.delete(LEADER_KEY, { previousSeq: rev });
  }
}
