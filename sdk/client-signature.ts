import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { requestHasBody } from './linger-close.ts';

/*
 * One signed client-address scheme for every hop that passes a request on inside the service (a
 * serving thread to main, one cluster node to another). The forwarding side names the client it
 * saw for one request to one receiver, in a header whose value is
 *
 *   <ip> <http|https> <unix ms> <nonce> <body sha256 hex | -> <hmac-sha256 hex>
 *
 * the HMAC covering, besides those fields, the receiver's id, the method and the URL (path and
 * query as sent). The receiver believes it only with its own id, its own method and URL, a time
 * within the window of its clock, and a body that is the one the digest names (`-`: no body,
 * unless the receiver accepts unsigned streamed bodies). Against replays a receiver either
 * remembers nonces for the window or believes the header only on connections nobody else can
 * open (`ClientVerifierOptions.replayMemory`).
 */

/**
 * How far a signature's time may lie from the receiver's clock, either way, by default (and so
 * how long a nonce is remembered): a header is good for one request within this window.
 *
 * @example
 * const verifier = new ClientVerifier({ receiver: 'node-b', windowMs: CLIENT_SIGNATURE_WINDOW_MS });
 */
export const CLIENT_SIGNATURE_WINDOW_MS = 30_000;

/** Nonces remembered at most by default (one per request within the window); beyond, headers are refused. */
const MAX_NONCES = 1_000_000;

/** What a signature covers: one request of one client to one receiver. */
export interface ClientClaim {
  /** The client's address as the forwarding side resolved it. */
  address: string;
  /** The client came over TLS. */
  https: boolean;
  /** Who the request is sent to (a node id; `main` for a serving thread's hop). */
  receiver: string;
  method: string;
  /** The path and query as sent. */
  url: string;
  /** The whole body, when one is signed; none (or empty): the digest is `-`. */
  body?: Buffer;
}

/** What a receiver believes of a signed header. */
export interface VouchedClient {
  address: string;
  https: boolean;
  /** The body digest the signature covers (the receiver must check the body against it); none for `-`. */
  bodySha256?: string;
}

// nonces unique per key holder without a random draw per request: a random prefix per process
// (each worker thread loads the module anew) and a counter
const NONCE_PREFIX = randomBytes(9).toString('base64url');
let nonceCount = 0;

function mac(key: Buffer, receiver: string, fields: readonly string[], method: string, url: string): string {
  return createHmac('sha256', key).update(`v3\n${receiver}\n${fields.join('\n')}\n${method}\n${url}`).digest('hex');
}

/**
 * The header value vouching that `claim.address` sent this request (signed with `key`, for
 * `claim.receiver`, at `now`). Make one per attempt: each carries a fresh nonce.
 *
 * @example
 * headers[CLIENT_HEADER] = signClient(key, { address: ip, https: false, receiver: 'node-b', method: 'GET', url: '/api/v3/process/x' });
 */
export function signClient(key: Buffer, claim: ClientClaim, now = Date.now()): string {
  nonceCount = (nonceCount + 1) % Number.MAX_SAFE_INTEGER;
  const nonce = `${NONCE_PREFIX}${nonceCount.toString(36).padStart(4, '0')}`;
  const digest = claim.body && claim.body.length > 0 ? createHash('sha256').update(claim.body).digest('hex') : '-';
  const fields = [claim.address, claim.https ? 'https' : 'http', String(now), nonce, digest];
  return `${fields.join(' ')} ${mac(key, claim.receiver, fields, claim.method, claim.url)}`;
}

/** How a receiver judges signed headers. */
export interface ClientVerifierOptions {
  /** This receiver's id: only headers signed for it are believed. */
  receiver: string;
  /** Milliseconds a signature's time may lie from this clock, either way (default 30 s). */
  windowMs?: number;
  /**
   * Remember each nonce for the window and refuse it a second time (default true). Turn it off
   * only where the header is believed on connections no client can open (main's internal
   * listener): there the connection already stops replays, and at tens of thousands of requests
   * a second the memory would hold millions of nonces.
   */
  replayMemory?: boolean;
  /** Nonces remembered at most (default 1 000 000); beyond, headers are refused. */
  maxNonces?: number;
  /**
   * Believe a `-` digest on a request with a body (a body streamed, not signed). Only where the
   * connection is trusted as a whole (main's internal listener); otherwise such a header could
   * carry any body.
   */
  unsignedBodies?: boolean;
}

const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const DIGEST = /^(-|[0-9a-f]{64})$/;

/**
 * Checks signed client headers for one receiver. `take` removes the header from the request
 * whatever it holds, so no route or hook ever sees it, and returns what it vouches for, or
 * undefined: no key, no header, a forged or foreign one, one signed for another receiver,
 * method or URL, a time outside the window, a nonce seen before, a body the signature does not
 * cover. Checks that cost memory come after the signature: only key holders can fill it.
 *
 * @example
 * const verifier = new ClientVerifier({ receiver: 'node-b' });
 * const client = verifier.take(key, request.headers, CLIENT_HEADER, request.method, request.url);
 * if (client?.bodySha256) expectBody(request, client.bodySha256);
 */
export class ClientVerifier {
  readonly #receiver: string;
  readonly #windowMs: number;
  readonly #unsignedBodies: boolean;
  readonly #nonces: NonceWindow | undefined;

  constructor(options: ClientVerifierOptions) {
    this.#receiver = options.receiver;
    this.#windowMs = options.windowMs ?? CLIENT_SIGNATURE_WINDOW_MS;
    this.#unsignedBodies = options.unsignedBodies ?? false;
    this.#nonces = options.replayMemory === false ? undefined : new NonceWindow(options.maxNonces ?? MAX_NONCES);
  }

  take(key: Buffer | undefined, headers: IncomingHttpHeaders, name: string, method: string, url: string, now = Date.now()): VouchedClient | undefined {
    const raw = headers[name];
    if (raw === undefined) return undefined;
    delete headers[name];
    if (!key || typeof raw !== 'string') return undefined;
    const fields = raw.split(' ');
    if (fields.length !== 6) return undefined;
    const [address, proto, at, nonce, digest, sig] = fields as [string, string, string, string, string, string];
    const ts = Number(at);
    if (!address || (proto !== 'http' && proto !== 'https') || !/^\d{1,16}$/.test(at) || !NONCE.test(nonce) || !DIGEST.test(digest)) return undefined;
    if (Math.abs(now - ts) > this.#windowMs) return undefined;
    const given = Buffer.from(sig, 'utf8');
    const want = Buffer.from(mac(key, this.#receiver, fields.slice(0, 5), method, url), 'utf8');
    if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
    if (digest === '-' && !this.#unsignedBodies && requestHasBody({ headers })) return undefined;
    if (this.#nonces && !this.#nonces.first(nonce, ts + this.#windowMs, now)) return undefined;
    const out: VouchedClient = { address, https: proto === 'https' };
    if (digest !== '-') out.bodySha256 = digest;
    return out;
  }
}

/** Nonces of the signatures taken, each until its signature's window ends. */
class NonceWindow {
  readonly #until = new Map<string, number>();
  readonly #max: number;

  constructor(max: number) { this.#max = max; }

  /** True the first time `nonce` is seen (and remembers it until `until`); false for a replay or when full. */
  first(nonce: string, until: number, now: number): boolean {
    // insertion order is nearly time order: expired ones are dropped from the front
    for (const [n, end] of this.#until) {
      if (end >= now) break;
      this.#until.delete(n);
    }
    if (this.#until.has(nonce) || this.#until.size >= this.#max) return false;
    this.#until.set(nonce, until);
    return true;
  }
}
