import { BlockList } from 'node:net';
import { ipFamily } from './ip.ts';
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The client's address, resolved once per request by the core's front door (the TCP peer,
     * or a forwarded address when the peer is a trusted proxy). Read it with `clientAddress`.
     */
    clientAddress?: string;
  }
}

/**
 * `::ffff:1.2.3.4` -> `1.2.3.4`; brackets and zone ids dropped.
 *
 * @example
 * normalizeIp('[::ffff:10.0.0.1]'); // '10.0.0.1'
 */
export function normalizeIp(ip: string): string {
  let s = ip.trim().replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  return mapped ? mapped[1]! : s;
}

/**
 * True for `127.0.0.0/8` and `::1` (after `normalizeIp`).
 *
 * @example
 * if (isLoopback(clientAddress(request))) { ... }
 */
export function isLoopback(ip: string): boolean {
  return ip === '::1' || /^127\./.test(ip);
}

/** Addresses a CidrSet remembers its answer for. */
const MEMO_MAX = 4096;

/**
 * A set of CIDRs (v4 and v6) to match addresses against (normalized ones: see `normalizeIp`).
 * Entries that do not parse are skipped (check config values with `validCidr`); answers are
 * remembered, for a bounded number of addresses.
 *
 * @example
 * const trusted = new CidrSet(['10.0.0.0/8', '::1/128']);
 * trusted.has('10.1.2.3'); // true
 */
export class CidrSet {
  readonly #list = new BlockList();
  readonly #memo = new Map<string, boolean>();
  /** How many entries parsed. */
  readonly size: number;

  constructor(cidrs: readonly string[]) {
    let n = 0;
    for (const cidr of cidrs) {
      const [net, bits] = cidr.split('/');
      const ip = normalizeIp(net ?? '');
      const family = ipFamily(ip);
      if (family === 0) continue;
      const max = family === 4 ? 32 : 128;
      this.#list.addSubnet(ip, bits === undefined ? max : Math.min(Number(bits), max), family === 4 ? 'ipv4' : 'ipv6');
      n++;
    }
    this.size = n;
  }

  /** True when `ip` is in one of the CIDRs. */
  has(ip: string): boolean {
    // most lists are empty (no trusted proxies); node's check builds an address object per call
    if (this.size === 0) return false;
    let v = this.#memo.get(ip);
    if (v === undefined) {
      const family = ipFamily(ip);
      v = family !== 0 && this.#list.check(ip, family === 4 ? 'ipv4' : 'ipv6');
      // bounded: a client's address comes back with each of its connections and requests
      if (this.#memo.size >= MEMO_MAX) this.#memo.clear();
      this.#memo.set(ip, v);
    }
    return v;
  }
}

/**
 * The client's address as the core's front door resolved it (trusted proxies honoured, see
 * `api.access.trusted_proxies`); the TCP peer for a request the front door has not seen.
 *
 * @example
 * throttle.run(clientAddress(request), attempt);
 */
export function clientAddress(request: FastifyRequest): string {
  return request.clientAddress ?? normalizeIp(request.socket?.remoteAddress ?? '');
}

/**
 * The key under which to count a client, e.g. for rate limits: the address itself for IPv4,
 * the /64 network for IPv6 (one subscriber usually holds a whole /64 and can rotate through it).
 *
 * @example
 * addressKey('2001:db8:1:2:aaaa::1'); // '2001:db8:1:2::/64'
 */
export function addressKey(ip: string): string {
  if (ipFamily(ip) !== 6) return ip;
  return `${expandV6(ip).slice(0, 4).map((h) => h.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** The eight hextets of an IPv6 address (an embedded IPv4 tail counts as two). */
function expandV6(ip: string): string[] {
  let s = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right];
}
