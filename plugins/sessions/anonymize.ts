import { isIP } from 'node:net';

/**
 * An address with its host part dropped, for the `extra` field of HLS sessions (reference 12.1):
 * IPv4 to its /24 (`1.2.3.0`), IPv6 to its /64 (`2001:db8:1:2::`).
 */
export function anonymizeIp(ip: string): string {
  const family = isIP(ip);
  if (family === 4) return ip.replace(/\.\d+$/, '.0');
  if (family !== 6) return ip;
  const [head = '', tail] = ip.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).join(':')}::`;
}
