import { isIP } from 'node:net';
import { CidrSet, normalizeIp } from '../../sdk/client-address.ts';

/**
 * `sessions.ip_ignorelist`: addresses whose traffic is not counted. An address that does not
 * parse is not counted either (reference 12.1). An empty list ignores nobody, loopback included.
 */
export class IgnoreList {
  readonly #cidrs: CidrSet;

  constructor(cidrs: readonly string[]) {
    this.#cidrs = new CidrSet(cidrs);
  }

  /** True when traffic from `ip` (with or without port, brackets, `::ffff:`) is counted. */
  collectable(ip: string): boolean {
    const bare = normalizeIp(stripPort(ip));
    return isIP(bare) !== 0 && !this.#cidrs.has(bare);
  }
}

/** `1.2.3.4:5` -> `1.2.3.4`, `[::1]:5` -> `::1`; a bare address stays. */
function stripPort(s: string): string {
  if (s.startsWith('[')) return s.slice(1, s.indexOf(']'));
  const colon = s.indexOf(':');
  return colon > 0 && colon === s.lastIndexOf(':') ? s.slice(0, colon) : s;
}
