import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/** `::ffff:1.2.3.4` -> `1.2.3.4`; brackets and zone ids dropped. */
export function normalizeIp(ip: string): string {
  let s = ip.trim().replace(/^\[|\]$/g, '');
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  return mapped ? mapped[1]! : s;
}

export function isLoopback(ip: string): boolean {
  return ip === '::1' || /^127\./.test(ip);
}

/**
 * The client's address. The reference takes the first `X-Forwarded-For` entry, then `X-Real-IP`,
 * from anyone, which lets any client claim to be 127.0.0.1 (and pass `disable_localhost`) or
 * dodge the IP lists. We trust those headers only from a loopback peer (a reverse proxy on the
 * same host), and then take the LAST `X-Forwarded-For` entry: the one that proxy appended,
 * not one the client wrote itself.
 */
export function clientAddress(request: FastifyRequest): string {
  const peer = normalizeIp(request.socket.remoteAddress ?? '');
  if (!isLoopback(peer)) return peer;
  const xff = header(request, 'x-forwarded-for');
  if (xff) {
    const parts = xff.split(',').map((p) => normalizeIp(p)).filter((p) => isIP(p));
    if (parts.length) return parts[parts.length - 1]!;
  }
  const real = normalizeIp(header(request, 'x-real-ip') ?? '');
  return isIP(real) ? real : peer;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
}

/** One `allow`/`block` pair of CIDR lists (reference 1.1): block wins, an empty allow list allows all. */
export class AccessList {
  readonly #allow: BlockList | undefined;
  readonly #block: BlockList;

  constructor(lists: { allow: readonly string[]; block: readonly string[] }) {
    this.#allow = lists.allow.length ? toBlockList(lists.allow) : undefined;
    this.#block = toBlockList(lists.block);
  }

  allows(ip: string): boolean {
    const family = isIP(ip);
    // an address we cannot parse cannot be matched against the lists: only an open list lets it in
    if (family === 0) return !this.#allow && this.#block.rules.length === 0;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (this.#block.check(ip, type)) return false;
    return !this.#allow || this.#allow.check(ip, type);
  }
}

function toBlockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits] = cidr.split('/');
    const ip = normalizeIp(net ?? '');
    const family = isIP(ip);
    // the config validation already refused bad CIDRs; skip rather than crash if one slips through
    if (family === 0 || bits === undefined) continue;
    list.addSubnet(ip, Math.min(Number(bits), family === 4 ? 32 : 128), family === 4 ? 'ipv4' : 'ipv6');
  }
  return list;
}
