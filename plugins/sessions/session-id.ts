import { randomBytes } from 'node:crypto';

/** The base57 alphabet of the short UUIDs the reference uses for HLS session ids. */
const B57 = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const VALID = /^[23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz]{22}$/;

/** A random 22-character short UUID. */
export function newSessionId(): string {
  let n = BigInt('0x' + randomBytes(16).toString('hex'));
  let s = '';
  for (let i = 0; i < 22; i++) {
    s = B57[Number(n % 57n)] + s;
    n /= 57n;
  }
  return s;
}

export const validSessionId = (s: string): boolean => VALID.test(s);
