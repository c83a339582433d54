import type { KV } from 'nats';
import { isWrongRevision } from './errors.ts';
import { processKey } from './keys.ts';

export type LostReason = 'deadline' | 'taken';

export interface OwnershipOptions {
  /** This node's id, written into each lease. */
  node: string;
  /** The bucket's ttl (max_age of `core_owners`): a lease not renewed for that long is gone. */
  ttlMs: number;
  /** Between two renewals of every held lease (default ttl/6: two can fail before the deadline). */
  renewMs?: number;
  /** A lease is no longer ours: stop that process's ffmpeg now. Fires once per loss. */
  onLost(id: string, reason: LostReason): void;
  /**
   * `on_quorum_loss`. `stop` (default): the self-fencing above. `keep`: a lease whose renewals
   * fail in transport is NOT lost at its deadline (its ffmpeg keeps running while NATS is
   * unreachable); once NATS answers again, a key that is still ours (or expired with nobody
   * taking it: it is created again) is kept, one written by another node is lost. During the
   * outage the leader may have moved the process: two copies can run until the reconnect.
   */
  onQuorumLoss?: 'stop' | 'keep';
}

interface Held { rev: number; deadline: number; renewing: boolean }

/**
 * Per-process ownership leases in `core_owners` (key = `processKey(id)`). `acquire` uses `create`,
 * so exactly one node owns a process; renewals are `update` with the revision last written.
 *
 * SELF-FENCING: a lease is held only until `sent_at + ttl/2` of its last successful renewal, on
 * this node's monotonic clock (`performance.now`). The server keeps the key until at least
 * `sent_at + ttl`, so `onLost` fires (and the caller stops the ffmpeg) while the key still
 * blocks every other node's `create`: two copies never run, whatever the network does. A renewal
 * refused by compare-and-swap (the key changed: someone else owns it) loses the lease at once; a
 * renewal that fails in transport (disconnected, timeout) keeps it only until its deadline.
 * After a reconnect `reconcile` drops every lease whose key is no longer at our revision.
 */
export class Ownership {
  #kv: KV;
  #opts: OwnershipOptions;
  #held = new Map<string, Held>();
  #renewTimer: NodeJS.Timeout | undefined;
  #fenceTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(kv: KV, opts: OwnershipOptions) {
    this.#kv = kv;
    this.#opts = opts;
  }

  /** True while this node may run process `id` (its lease deadline has not passed, or `keep`). */
  holds(id: string, now = performance.now()): boolean {
    const h = this.#held.get(id);
    return h !== undefined && (this.#keepAll || now < h.deadline);
  }

  get #keepAll(): boolean { return this.#opts.onQuorumLoss === 'keep'; }

  held(): string[] { return [...this.#held.keys()].filter((id) => this.holds(id)); }

  /**
   * Takes the lease of `id` if nobody holds it; false when another node does. A key still holding
   * this node's own write (its lease lapsed here, e.g. while NATS elected a new stream leader) is
   * taken back with `update` at that revision: the compare-and-swap succeeds only if nobody wrote
   * the key since, i.e. nobody else owned it in between.
   */
  async acquire(id: string): Promise<boolean> {
    if (this.holds(id)) return true;
    const key = processKey(id);
    const sentAt = performance.now();
    try {
      this.#keep(id, await this.#kv.create(key, this.#value()), sentAt);
      return true;
    } catch (err) {
      if (!isWrongRevision(err)) throw err;
    }
    const e = await this.#kv.get(key);
    if (!e || e.operation !== 'PUT' || e.json<{ node?: string }>().node !== this.#opts.node) return false;
    try {
      this.#keep(id, await this.#kv.update(key, this.#value(), e.revision), sentAt);
      return true;
    } catch (err) {
      if (isWrongRevision(err)) return false;
      throw err;
    }
  }

  /** Gives `id` up (the caller stopped its ffmpeg): deleted at our revision, free at once for others. */
  async release(id: string): Promise<void> {
    const h = this.#held.get(id);
    if (!h) return;
    this.#held.delete(id);
    await this.#kv.delete(processKey(id), { previousSeq: h.rev }).catch(() => {});
  }

  /** Starts renewing every held lease and watching their deadlines. */
  start(): void {
    if (this.#closed || this.#renewTimer) return;
    const every = this.#opts.renewMs ?? this.#opts.ttlMs / 6;
    this.#renewTimer = setInterval(() => void this.renewAll(), every);
    this.#arm();
  }

  /** One renewal of every held lease (also what the timer does). */
  async renewAll(): Promise<void> {
    await Promise.all([...this.#held.keys()].map((id) => this.#renew(id)));
  }

  async #renew(id: string): Promise<void> {
    const h = this.#held.get(id);
    if (!h || h.renewing) return;
    h.renewing = true;
    const sentAt = performance.now();
    try {
      const rev = await this.#kv.update(processKey(id), this.#value(), h.rev);
      // the same lease still (not lost or released meanwhile): extend it in place
      if (this.#held.get(id) === h) { h.rev = rev; h.deadline = sentAt + this.#opts.ttlMs / 2; this.#arm(); }
    } catch (err) {
      // a transport failure: the deadline decides; a refusal: someone else's key, or ours
      if (isWrongRevision(err)) await this.#adoptOrLose(id, h).catch(() => {});
    } finally {
      h.renewing = false;
    }
  }

  /**
   * A refused renewal: if the key holds this node's write at a later revision (an earlier renewal
   * landed but its answer was lost), adopt that revision without moving the deadline; otherwise
   * another node owns it (or the key expired): lost.
   */
  async #adoptOrLose(id: string, h: Held): Promise<void> {
    const e = await this.#kv.get(processKey(id));
    const node = e?.operation === 'PUT' ? e.json<{ node?: string }>().node : undefined;
    if (this.#held.get(id) !== h) return;
    if (e && node === this.#opts.node && e.revision >= h.rev) h.rev = e.revision;
    else if (this.#keepAll && node === undefined) await this.#recreate(id, h);
    else this.#lose(id, h, 'taken');
  }

  /**
   * `keep`: the key expired while NATS was away and nobody took it: this node's again, or lost. A
   * renewal and `reconcile` may both get here after a heal: the create that loses the race finds
   * this node's own write and adopts it (it was lost before, and its ffmpeg stopped: issue 44.8).
   */
  async #recreate(id: string, h: Held): Promise<void> {
    const sentAt = performance.now();
    try {
      const rev = await this.#kv.create(processKey(id), this.#value());
      if (this.#held.get(id) === h) { h.rev = rev; h.deadline = sentAt + this.#opts.ttlMs / 2; }
    } catch (err) {
      if (!isWrongRevision(err)) return;
      const e = await this.#kv.get(processKey(id));
      const node = e?.operation === 'PUT' ? e.json<{ node?: string }>().node : undefined;
      if (this.#held.get(id) !== h) return;
      if (e && node === this.#opts.node) h.rev = Math.max(h.rev, e.revision);
      else this.#lose(id, h, 'taken');
    }
  }

  /** After a reconnect: any lease whose key is gone or holds another node's write is lost. */
  async reconcile(): Promise<void> {
    await Promise.all([...this.#held].map(async ([id, h]) => {
      if (this.#held.get(id) === h) await this.#adoptOrLose(id, h);
    }));
  }

  #keep(id: string, rev: number, sentAt: number): void {
    this.#held.set(id, { rev, deadline: sentAt + this.#opts.ttlMs / 2, renewing: false });
    this.#arm();
  }

  #lose(id: string, h: Held, reason: LostReason): void {
    if (this.#held.get(id) !== h) return;
    this.#held.delete(id);
    this.#opts.onLost(id, reason);
  }

  /** The fence: a timer at the earliest deadline fires `onLost` for every lease past its own. */
  #arm(): void {
    clearTimeout(this.#fenceTimer);
    this.#fenceTimer = undefined;
    if (this.#closed || this.#held.size === 0) return;
    // `keep`: no fence; only a refusal or `reconcile` ends a lease
    if (this.#keepAll) return;
    const now = performance.now();
    for (const [id, h] of this.#held) if (now >= h.deadline) this.#lose(id, h, 'deadline');
    if (this.#held.size === 0) return;
    const next = Math.min(...[...this.#held.values()].map((h) => h.deadline));
    this.#fenceTimer = setTimeout(() => this.#arm(), Math.max(1, next - now));
  }

  #value(): string {
    return JSON.stringify({ node: this.#opts.node, at: new Date().toISOString() });
  }

  /**
   * Stops renewing and fencing; the caller stops its ffmpegs first (no onLost fires here). With
   * `release`, every lease is given up (a graceful leave); without, they expire after ttl.
   */
  async close(release = false): Promise<void> {
    this.#closed = true;
    clearInterval(this.#renewTimer);
    clearTimeout(this.#fenceTimer);
    if (release) await Promise.all([...this.#held.keys()].map((id) => this.release(id)));
    this.#held.clear();
  }
}
