import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { KV } from 'nats';
import { isWrongRevision } from './errors.ts';

/** Marks a request one node passed to another: the receiver never proxies it again (loop-safe). */
export const HOP_HEADER = 'x-core-cluster-hop';
/** The original client's address, signed by the proxying node: `<ip> <unix ms> <hmac hex>`. */
export const CLIENT_HEADER = 'x-core-cluster-client';
/** Where the key lives (`core_assign` has no TTL and no watcher). */
export const KEY_NAME = 'secret.peer';
/** How far a signature's time may lie from this node's clock (node clocks run NTP). */
const MAX_SKEW_MS = 5 * 60_000;

/**
 * The cluster's shared signing key for client addresses. Created once with `create` (so exactly
 * one node's random key wins a race) in `core_assign` under `secret.peer` and read by every node
 * at start. Anyone who can read the NATS account can read it: NATS must be closed to clients.
 */
export class PeerKey {
  #key: Buffer | undefined;

  get ready(): boolean { return this.#key !== undefined; }

  /** Reads the key, creating it when the cluster has none yet. Throws on a NATS failure. */
  async load(kv: KV): Promise<void> {
    if (this.#key) return;
    for (let i = 0; i < 3 && !this.#key; i++) {
      const e = await kv.get(KEY_NAME);
      if (e && e.operation === 'PUT' && e.value.length >= 32) { this.#key = Buffer.from(e.string(), 'base64'); return; }
      try {
        const fresh = randomBytes(32);
        await kv.create(KEY_NAME, fresh.toString('base64'));
        this.#key = fresh;
      } catch (err) {
        // another node created it first: read theirs on the next round
        if (!isWrongRevision(err) && !/exists/i.test((err as Error).message)) throw err;
      }
    }
  }

  /** For tests: a key given directly. */
  use(key: Buffer): void { this.#key = key; }

  /** The header value vouching that `ip` sent `method url` (undefined without a key). */
  sign(ip: string, method: string, url: string, now = Date.now()): string | undefined {
    return this.#key ? `${ip} ${now} ${mac(this.#key, ip, now, method, url)}` : undefined;
  }

  /**
   * The `peer` tap: the address a proxying node vouches for, or undefined (no header, a forged
   * or stale one, or no key yet). The header is removed either way, so nothing else sees it.
   */
  take(request: FastifyRequest, now = Date.now()): string | undefined {
    const raw = request.headers[CLIENT_HEADER];
    if (raw === undefined) return undefined;
    delete request.headers[CLIENT_HEADER];
    if (!this.#key || typeof raw !== 'string') return undefined;
    const [ip, at, sig] = raw.split(' ');
    const ts = Number(at);
    if (!ip || !sig || !Number.isSafeInteger(ts) || Math.abs(now - ts) > MAX_SKEW_MS) return undefined;
    const given = Buffer.from(sig, 'utf8');
    const want = Buffer.from(mac(this.#key, ip, ts, request.method, request.url), 'utf8');
    return given.length === want.length && timingSafeEqual(given, want) ? ip : undefined;
  }
}

/** Bound to the request line too: a captured header is worth nothing for another request. */
function mac(key: Buffer, ip: string, ts: number, method: string, url: string): string {
  return createHmac('sha256', key).update(`${ip}\n${ts}\n${method}\n${url}`).digest('hex');
}
