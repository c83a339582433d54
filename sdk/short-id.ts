import { randomBytes } from 'node:crypto';

/** The base57 alphabet of the short UUIDs datarhei Core uses for process and session ids. */
const B57 = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/**
 * A random 22-character short UUID (128 random bits in base57), as the reference generates ids.
 *
 * @example
 * const id = body.id || shortId(); // e.g. 'mQ9eyfVZNjuM8w3JX7bHCa'
 */
export function shortId(): string {
  let n = BigInt('0x' + randomBytes(16).toString('hex'));
  let s = '';
  for (let i = 0; i < 22; i++) {
    s = B57[Number(n % 57n)] + s;
    n /= 57n;
  }
  return s;
}
