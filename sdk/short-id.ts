import { randomFillSync } from 'node:crypto';

/** The base57 alphabet of the short UUIDs datarhei Core uses for process and session ids. */
const B57 = '23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
/** Bytes below this map evenly onto the alphabet (4 x 57); the others are skipped. */
const EVEN = 228;

// random bytes drawn 4 KiB at a time: a new HLS viewer's id costs no system call of its own
const pool = Buffer.allocUnsafeSlow(4096);
let at = pool.length;

function nextByte(): number {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  return pool[at++]!;
}

/**
 * A random 22-character short UUID (22 uniform base57 letters, 128 bits of entropy), the shape of
 * the reference's ids.
 *
 * @example
 * const id = body.id || shortId(); // e.g. 'mQ9eyfVZNjuM8w3JX7bHCa'
 */
export function shortId(): string {
  let s = '';
  while (s.length < 22) {
    const b = nextByte();
    if (b < EVEN) s += B57[b % 57];
  }
  return s;
}

const SHORT_ID = new RegExp(`^[${B57}]{22}$`);

/**
 * True for a string of the shape `shortId` makes (22 base57 letters).
 *
 * @example
 * if (!isShortId(query.session)) return refuse(403);
 */
export function isShortId(s: string): boolean {
  return SHORT_ID.test(s);
}
