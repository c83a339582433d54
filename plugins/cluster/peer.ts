import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { KV } from 'nats';
import type { PeerVouch } from '../../sdk/index.ts';
import { isWrongRevision } from './errors.ts';

/** Marks a request one node passed to another: the receiver never proxies it again (loop-safe). */
export const HOP_HEADER = 'x-core-cluster-hop';
/**
 * The original client's address, signed by the proxying node for one request to one node:
 * `<ip> <unix ms> <nonce> <body sha256 hex, or -> <hmac-sha256 hex>`.
 */
export const CLIENT_HEADER = 'x-core-cluster-client';
/** Where the key lives (`core_assign` has no TTL and no watcher). */
export const KEY_NAME = 'secret.peer';
/**
 * How far a signature's time may lie from the receiver's clock, either way (node clocks run NTP),
 * and so how long its nonce is remembered: a header is good for one request within this window.
 */
export const SIGNATURE_WINDOW_MS = 30_000;
/** Nonces remembered at most (one per proxied request within the window); beyond, headers are refused. */
const MAX_NONCES = 1_000_000;

/** What a signature covers: one request of one client to one node. */
export interface SignedRequest {
  /** The client address the proxying node resolved. */
  ip: string;
  method: string;
  /** The path and query as sent. */
  url: string;
  /** The node the request is sent to (its node id). */
  node: string;
  /** The whole body, when the request has one. */
  body?: Buffer;
}

/**
 * The cluster's shared signing key for client addresses. Created once with `create` (so exactly
 * one node's random key wins a race) in `core_assign` under `secret.peer` and read by every node
 * at start. Anyone who can read the NATS account can read it: NATS must be closed to clients.
 * `self` is this node's id: it takes only headers signed for it.
 */
export class PeerKey {
  #key: Buffer | undefined;
  readonly #self: string;
  readonly #nonces = new NonceWindow();

  constructor(self: string) { this.#self = self; }

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

  /** The header value vouching that `r.ip` sent this request to `r.node` (undefined without a key). */
  sign(r: SignedRequest, now = Date.now()): string | undefined {
    if (!this.#key) return undefined;
    const nonce = randomBytes(12).toString('base64url');
    const digest = r.body && r.body.length > 0 ? createHash('sha256').update(r.body).digest('hex') : '-';
    return `${r.ip} ${now} ${nonce} ${digest} ${mac(this.#key, { ...r, ts: now, nonce, digest })}`;
  }

  /**
   * The `peer` tap: the address a proxying node vouches for (with the body digest the core then
   * checks), or undefined: no header, a forged or foreign one, one signed for another node, method
   * or URL, a time outside the window, a nonce seen before (a replay), a body where the signature
   * covers none. The header is removed either way, so nothing else sees it.
   */
  take(request: FastifyRequest, now = Date.now()): string | PeerVouch | undefined {
    const raw = request.headers[CLIENT_HEADER];
    if (raw === undefined) return undefined;
    delete request.headers[CLIENT_HEADER];
    if (!this.#key || typeof raw !== 'string') return undefined;
    const [ip, at, nonce, digest, sig, extra] = raw.split(' ');
    const ts = Number(at);
    if (!ip || !nonce || !digest || !sig || extra !== undefined || !Number.isSafeInteger(ts)) return undefined;
    if (!/^[A-Za-z0-9_-]{16,64}$/.test(nonce) || !/^(-|[0-9a-f]{64})$/.test(digest)) return undefined;
    if (Math.abs(now - ts) > SIGNATURE_WINDOW_MS) return undefined;
    const given = Buffer.from(sig, 'utf8');
    const want = Buffer.from(mac(this.#key, { ip, ts, nonce, digest, method: request.method, url: request.url, node: this.#self }), 'utf8');
    if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
    // checked after the signature, so only the key's holders can fill the memory of nonces
    if (!this.#nonces.first(nonce, ts + SIGNATURE_WINDOW_MS, now)) return undefined;
    if (digest === '-') return hasBody(request) ? undefined : ip;
    return { address: ip, bodySha256: digest };
  }
}

function hasBody(request: FastifyRequest): boolean {
  const h = request.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

/** Bound to the receiving node, the request line, the body and a one-time nonce. */
function mac(key: Buffer, s: { ip: string; ts: number; nonce: string; digest: string; method: string; url: string; node: string }): string {
  return createHmac('sha256', key).update(`v2\n${s.node}\n${s.ip}\n${s.ts}\n${s.nonce}\n${s.method}\n${s.url}\n${s.digest}`).digest('hex');
}

/** Nonces of the signatures taken, each until its signature's window ends. */
class NonceWindow {
  readonly #until = new Map<string, number>();

  /** True the first time `nonce` is seen (and remembers it until `until`); false for a replay or when full. */
  first(nonce: string, until: number, now: number): boolean {
    // insertion order is nearly time order: expired ones are dropped from the front
    for (const [n, end] of this.#until) {
      if (end >= now) break;
      this.#until.delete(n);
    }
    if (this.#until.has(nonce) || this.#until.size >= MAX_NONCES) return false;
    this.#until.set(nonce, until);
    return true;
  }
}
