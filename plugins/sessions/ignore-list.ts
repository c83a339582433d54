import { BlockList, isIP } from 'node:net';
import { normalizeIp } from '../../sdk/client-address.ts';

/**
 * `sessions.ip_ignorelist`: addresses whose traffic is not counted. An address that does not
 * parse is not counted either (reference 12.1). An empty list ignores nobody, loopback included.
 */
export class IgnoreList {
  readonly #list = new BlockList();
  readonly #memo = new Map<string, boolean>();

  constructor(cidrs: readonly string[]) {
    for (const cidr of cidrs) {
      const [net, bits] = cidr.split('/');
      const ip = normalizeIp(net ?? '');
      const family = isIP(ip);
      if (family === 0) continue; // refused by validate already
      const max = family === 4 ? 32 : 128;
      this.#list.addSubnet(ip, bits === undefined ? max : Math.min(Number(bits), max), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** True when traffic from `ip` (with or without port, brackets, `::ffff:`) is counted. */
  collectable(ip: string): boolean {
    let v = this.#memo.get(ip);
    if (v === undefined) {
      // viewers come back every few seconds: remember the answer, bounded
      const bare = normalizeIp(stripPort(ip));
      const family = isIP(bare);
      v = family !== 0 && !this.#list.check(bare, family === 4 ? 'ipv4' : 'ipv6');
      if (this.#memo.size > 4096) this.#memo.clear();
      this.#memo.set(ip, v);
    }
    return v;
  }
}

/** `1.2.3.4:5` -> `1.2.3.4`, `[::1]:5` -> `::1`; a bare address stays. */
function stripPort(s: string): string {
  if (s.startsWith('[')) return s.slice(1, s.indexOf(']'));
  const colon = s.indexOf(':');
  return colon > 0 && colon === s.lastIndexOf(':') ? s.slice(0, colon) : s;
}
