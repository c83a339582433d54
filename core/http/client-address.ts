import { ipFamily } from '../../sdk/ip.ts';
import type { IncomingHttpHeaders } from 'node:http';
// the SDK's file itself, not its index: the serving threads load this module too
import { CidrSet, normalizeIp } from '../../sdk/client-address.ts';

/** What the address rules read of a request: its socket's peer and its headers (fastify's or node's). */
export interface ClientRequestLike {
  socket: { remoteAddress?: string };
  headers: IncomingHttpHeaders;
}

/** One `allow`/`block` pair of CIDR lists (reference 1.1): block wins, an empty allow list allows all. */
export class AccessList {
  readonly #allow: CidrSet;
  readonly #block: CidrSet;

  constructor(lists: { allow: readonly string[]; block: readonly string[] }) {
    this.#allow = new CidrSet(lists.allow);
    this.#block = new CidrSet(lists.block);
  }

  allows(ip: string): boolean {
    // an address we cannot parse cannot be matched against the lists: only an open list lets it in
    if (ipFamily(ip) === 0) return this.#allow.size === 0 && this.#block.size === 0;
    if (this.#block.has(ip)) return false;
    return this.#allow.size === 0 || this.#allow.has(ip);
  }
}

/**
 * The client's address. The reference believes `X-Forwarded-For` and `X-Real-IP` from anyone,
 * so any client can pose as 127.0.0.1 or dodge the IP lists. Here the headers count only when
 * the TCP peer is a trusted proxy (`api.access.trusted_proxies`), and then:
 * 1. `X-Real-IP`, when it names an untrusted address: a proxy that sets it overwrites whatever
 *    the client sent (nginx `proxy_set_header X-Real-IP $remote_addr`), while it usually passes
 *    a client-written `X-Forwarded-For` through untouched;
 * 2. else `X-Forwarded-For` walked from the right, skipping trusted proxies: each proxy appends
 *    its peer, so the rightmost untrusted entry is the first one no trusted hop vouches for;
 * 3. else the peer.
 * A proxy that only appends `X-Forwarded-For` must therefore clear or set `X-Real-IP`.
 * `threadPeer` is the TCP peer a serving thread vouched for (signed header): the request reached
 * this thread over loopback, but the rules above apply to the client's own connection.
 */
export function resolveClientAddress(request: ClientRequestLike, trusted: CidrSet, threadPeer?: string): string {
  const peer = normalizeIp(threadPeer ?? request.socket.remoteAddress ?? '');
  if (!trusted.has(peer)) return peer;
  const real = normalizeIp(header(request, 'x-real-ip') ?? '');
  if (ipFamily(real) && !trusted.has(real)) return real;
  const xff = header(request, 'x-forwarded-for');
  if (xff) {
    const hops = xff.split(',').map((p) => normalizeIp(p));
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      // garbage in the chain: nothing left of it can be vouched for; stop at the last good hop
      if (!ipFamily(hop)) break;
      if (!trusted.has(hop)) return hop;
    }
    // every hop is a trusted proxy: the leftmost one is where the request came from
    const first = hops.find((h) => ipFamily(h));
    if (first && hops.every((h) => ipFamily(h))) return first;
  }
  return ipFamily(real) ? real : peer;
}

function header(request: ClientRequestLike, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}
