import { connect, type KV, type KvOptions, type NatsConnection } from 'nats';

/**
 * The cluster's KV buckets. Liveness, the leader lease and ownership leases expire after ttl
 * (bucket max_age: nats-server 2.9 has no per-key TTL); processes, assignments and IAM's users
 * are kept.
 */
export const BUCKETS = {
  nodes: 'core_nodes', leader: 'core_leader', processes: 'core_processes', owners: 'core_owners', assign: 'core_assign',
  users: 'core_users',
} as const;
const EXPIRING: ReadonlySet<keyof typeof BUCKETS> = new Set(['nodes', 'leader', 'owners'] as const);

/** The options `js.views.kv` opens (or creates) bucket `b` with. */
export function bucketOptions(b: keyof typeof BUCKETS, ttlMs: number, replicas: number): Partial<KvOptions> {
  // no direct gets: any replica answers those, also a stale or paused one (a paused server keeps
  // its subscriptions until its routes time out, black-holing requests); the stream leader is
  // current by construction
  return { history: 1, replicas, allow_direct: false, ...(EXPIRING.has(b) ? { ttl: ttlMs } : {}) };
}

/** The little of the plugin's logger this folder uses. */
export interface Log {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export type Buckets = Record<keyof typeof BUCKETS, KV>;

export interface LinkOptions { servers: string[]; name: string; ttlMs: number; replicas: number }

/**
 * The node's NATS connection and its JetStream buckets. Connecting and opening the buckets are
 * retried by the caller's tick (a JetStream cluster needs a few seconds to elect its meta
 * leader); `onChange` reports disconnects and reconnects as the client sees them.
 */
export class NatsLink {
  #opts: LinkOptions;
  #log: Log;
  #nc: NatsConnection | undefined;
  #buckets: Buckets | undefined;
  #connected = false;
  #lastError: string | null = null;
  #closed = false;
  #onChange: (connected: boolean) => void;

  constructor(opts: LinkOptions, log: Log, onChange: (connected: boolean) => void) {
    this.#opts = opts;
    this.#log = log;
    this.#onChange = onChange;
  }

  get connected(): boolean { return this.#connected; }
  get lastError(): string | null { return this.#lastError; }
  /** The buckets, once connected and opened; stays set across reconnects (the client resubscribes). */
  get buckets(): Buckets | undefined { return this.#connected ? this.#buckets : undefined; }

  /** Records a failure for `health.last_error` (and the log, once per distinct message). */
  fail(what: string, err: unknown): void {
    const msg = `${what}: ${(err as Error)?.message ?? String(err)}`;
    if (msg !== this.#lastError) this.#log.warn({ err }, `cluster: ${what}`);
    this.#lastError = msg;
  }

  /** One step toward a usable link: connect, then open the buckets. Never throws. */
  async ensure(): Promise<void> {
    if (this.#closed) return;
    try {
      if (!this.#nc) await this.#connect();
      if (this.#nc && this.#connected && !this.#buckets) await this.#open(this.#nc);
    } catch (err) {
      this.fail(this.#nc ? 'opening the cluster buckets' : 'connecting to NATS', err);
    }
  }

  async #connect(): Promise<void> {
    const nc = await connect({
      servers: this.#opts.servers, name: this.#opts.name,
      // only the servers configured: a node partitioned from its server must not hop to another
      ignoreClusterUpdates: true, maxReconnectAttempts: -1, reconnectTimeWait: 500,
      pingInterval: Math.max(1000, this.#opts.ttlMs / 3), maxPingOut: 2, timeout: this.#opts.ttlMs,
    });
    if (this.#closed) { await nc.close(); return; }
    this.#nc = nc;
    this.#set(true);
    void this.#watchStatus(nc);
  }

  async #open(nc: NatsConnection): Promise<void> {
    const js = nc.jetstream({ timeout: Math.max(1000, this.#opts.ttlMs / 2) });
    const open: Partial<Buckets> = {};
    for (const b of Object.keys(BUCKETS) as (keyof typeof BUCKETS)[]) {
      open[b] = await js.views.kv(BUCKETS[b], bucketOptions(b, this.#opts.ttlMs, this.#opts.replicas));
    }
    this.#buckets = open as Buckets;
    this.#lastError = null;
  }

  async #watchStatus(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') this.#set(false);
      else if (s.type === 'reconnect') this.#set(true);
      else if (s.type === 'error') this.fail('NATS', s.data);
    }
  }

  #set(connected: boolean): void {
    if (this.#connected === connected) return;
    this.#connected = connected;
    if (!connected) this.#lastError ??= 'disconnected from NATS';
    this.#log.info({ connected }, connected ? 'cluster: connected to NATS' : 'cluster: disconnected from NATS');
    this.#onChange(connected);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const nc = this.#nc;
    this.#nc = undefined;
    this.#buckets = undefined;
    this.#connected = false;
    if (nc) await nc.close().catch(() => {});
  }
}
