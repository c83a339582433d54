import { ipFamily } from '../../sdk/ip.ts';
import { CidrSet, normalizeIp } from '../../sdk/client-address.ts';

/**
 * `sessions.ip_ignorelist`: whether traffic from an address (with or without port, brackets,
 * `::ffff:`) is counted. An address on the list or one that does not parse is not (reference
 * 12.1). An empty list ignores nobody, loopback included.
 */
export function collectableBy(ignore: readonly string[]): (ip: string) => boolean {
  const cidrs = new CidrSet(ignore);
  return (ip) => {
    const bare = normalizeIp(stripPort(ip));
    return ipFamily(bare) !== 0 && !cidrs.has(bare);
  };
}

/** `1.2.3.4:5` -> `1.2.3.4`, `[::1]:5` -> `::1`; a bare address stays. */
function stripPort(s: string): string {
  if (s.startsWith('[')) return s.slice(1, s.indexOf(']'));
  const colon = s.indexOf(':');
  return colon > 0 && colon === s.lastIndexOf(':') ? s.slice(0, colon) : s;
}
