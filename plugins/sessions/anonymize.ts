import { ipFamily } from '../../sdk/ip.ts';
import { addressKey } from '../../sdk/client-address.ts';

/**
 * An address with its host part dropped, for the `extra` field of HLS sessions (reference 12.1):
 * IPv4 to its /24 (`1.2.3.0`), IPv6 to its /64 (`2001:db8:1:2::`, the toolkit's `addressKey`).
 */
export function anonymizeIp(ip: string): string {
  const family = ipFamily(ip);
  if (family === 4) return ip.replace(/\.\d+$/, '.0');
  return family === 6 ? addressKey(ip).slice(0, -'/64'.length) : ip;
}
