import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { KV } from 'nats';
import { CLIENT_SIGNATURE_WINDOW_MS, ClientVerifier, signClient, type PeerVouch } from '../../sdk/index.ts';
import { isWrongRevision } from './errors.ts';

/** Marks a request one node passed to another: the receiver never proxies it again (loop-safe). */
export const HOP_HEADER = 'x-core-cluster-hop';
/**
 * The original client's address, signed by the proxying node for one request to one node in the
 * SDK's client signature (`signClient`, the serving threads' scheme too):
 * `<ip> <http|https> <unix ms> <nonce> <body sha256 hex, or -> <hmac-sha256 hex>`.
 */
export const CLIENT_HEADER = 'x-core-cluster-client';
/** Where the key lives (`core_assign` has no TTL and no watcher). */
export const KEY_NAME = 'secret.peer';
/**
 * How far a signature's time may lie from the receiver's clock, either way (node clocks run NTP),
 * and so how long its nonce is remembered: a header is good for one request within this window.
 */
export const SIGNATURE_WINDOW_MS = CLIENT_SIGNATURE_WINDOW_MS;

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
  /** The client came over TLS (signed; the receiver judges by its own connection's protocol). */
  https?: boolean;
}

/**
 * The cluster's shared signing key for client addresses. Created once with `create` (so exactly
 * one node's random key wins a race) in `core_assign` under `secret.peer` and read by every node
 * at start. Anyone who can read the NATS account can read it: NATS must be closed to clients.
 * `self` is this node's id: it takes only headers signed for it.
 */
export class PeerKey {
  #key: Buffer | undefined;
  readonly #verifier: ClientVerifier;
  /** Requests whose header checked out (`take`), for the cluster-internal routes (`vouched`). */
  readonly #vouched = new WeakSet<FastifyRequest>();

  constructor(self: string) { this.#verifier = new ClientVerifier({ receiver: self }); }

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

  /**
   * True when `request` came from another node: its signed header checked out in `take` (which ran
   * first, in the core's `onRequest`). The cluster-internal routes (`relay-route.ts`) serve only these.
   */
  vouched(request: FastifyRequest): boolean { return this.#vouched.has(request); }

  /** For tests: a key given directly. */
  use(key: Buffer): void { this.#key = key; }

  /** The header value vouching that `r.ip` sent this request to `r.node` (undefined without a key). */
  sign(r: SignedRequest, now = Date.now()): string | undefined {
    if (!this.#key) return undefined;
    return signClient(this.#key, { address: r.ip, https: r.https ?? false, receiver: r.node, method: r.method, url: r.url, body: r.body }, now);
  }

  /**
   * The `peer` tap: the address a proxying node vouches for (with the body digest the core then
   * checks), or undefined: no header, a forged or foreign one, one signed for another node, method
   * or URL, a time outside the window, a nonce seen before (a replay), a body where the signature
   * covers none (`ClientVerifier`). The header is removed either way, so nothing else sees it.
   */
  take(request: FastifyRequest, now = Date.now()): string | PeerVouch | undefined {
    const vouched = this.#verifier.take(this.#key, request.headers, CLIENT_HEADER, request.method, request.url, now);
    if (!vouched) return undefined;
    this.#vouched.add(request);
    return vouched.bodySha256 ? { address: vouched.address, bodySha256: vouched.bodySha256 } : vouched.address;
  }
}
