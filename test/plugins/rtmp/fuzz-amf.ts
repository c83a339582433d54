import { amf0, amf3 } from './wire-kit.ts';

/*
 * Seeded randomness and random AMF values for the RTMP fuzz suite. Everything here is a pure
 * function of the generator's state: the same seed gives the same bytes on every machine.
 */

/** mulberry32: small, fast, good enough to spread test cases; seeded, so reproducible. */
export class Rng {
  #s: number;

  constructor(seed: number) {
    this.#s = seed >>> 0;
  }

  next(): number {
    let t = (this.#s = (this.#s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** An integer in [a, b]. */
  range(a: number, b: number): number {
    return a + this.int(b - a + 1);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

/** Edge values for 32-bit fields (lengths, counts, chunk sizes, timestamps). */
export const EDGE32 = [0, 1, 2, 3, 4, 127, 128, 255, 256, 4096, 0x7fff, 0xffff, 0x10000, 0xfffffe, 0xffffff, 0x1000000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff];

/** Strings a parser may treat specially: object keys, command names, stream names. */
export const ODD_STRINGS = [
  '', 'app', 'tcUrl', 'objectEncoding', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'connect', 'publish', 'play',
  '..', '.', '/', '//', 'a/../b', 'x?token=', '?token=a&token=b', '%00', '%2e%2e', 'live\u0000x', '\u202e', 'é✓😀', 'a'.repeat(300),
  'fuzz.stream', 'restreamer-ui:ingest:00000000-0000-0000-0000-000000000000.stream', 'rtmp://127.0.0.1/live', 'not a url',
];

function randomString(r: Rng): string {
  return r.chance(0.6) ? r.pick(ODD_STRINGS) : r.bytes(r.int(40)).toString('latin1');
}

/** A string value whose length field may lie. */
function lyingString(r: Rng, long: boolean): Buffer {
  const s = long ? amf0.longStr(randomString(r)) : amf0.str(randomString(r));
  if (r.chance(0.3)) {
    if (long) s.writeUInt32BE(r.pick(EDGE32), 1);
    else s.writeUInt16BE(r.pick(EDGE32) & 0xffff, 1);
  }
  return s;
}

/** A random AMF0 value, nested up to `depth`; sometimes malformed on purpose. */
export function randomAmf0(r: Rng, depth = 4): Buffer {
  const roll = r.int(depth > 0 ? 18 : 11);
  switch (roll) {
    case 0: return amf0.num(r.chance(0.5) ? r.pick(EDGE32) : (r.next() - 0.5) * 1e12);
    case 1: return amf0.bool(r.chance(0.5));
    case 2: case 3: return lyingString(r, false);
    case 4: return lyingString(r, true);
    case 5: return amf0.null();
    case 6: return amf0.undef();
    case 7: return Buffer.from([0x07, r.int(256), r.int(256)]); // reference
    case 8: return Buffer.concat([Buffer.from([0x0b]), r.bytes(r.chance(0.8) ? 10 : r.int(10))]); // date, maybe short
    case 9: return Buffer.concat([Buffer.from([r.pick([0x04, 0x0d, 0x0e, 0x09, 0x11, 0x12, 0xff])]), r.bytes(r.int(8))]); // unknown markers
    case 10: return lyingString(r, false).subarray(0, r.int(4)); // truncated value
    case 11: case 12: case 13: return amf0.obj(fields(r, depth));
    case 14: return amf0.ecma(fields(r, depth));
    case 15: {
      const items = Array.from({ length: r.int(5) }, () => randomAmf0(r, depth - 1));
      return amf0.strict(items, r.chance(0.7) ? items.length : r.pick(EDGE32));
    }
    case 16: return Buffer.concat([Buffer.from([0x10]), amf0.utf(randomString(r)), amf0.obj(fields(r, depth)).subarray(1)]); // typed object
    default: return Buffer.concat([Buffer.from([0x0f]), amf0.utf(randomString(r))]); // XML document
  }
}

function fields(r: Rng, depth: number): Array<[string, Buffer]> {
  return Array.from({ length: r.int(6) }, () => [randomString(r), randomAmf0(r, depth - 1)] as [string, Buffer]);
}

/** Objects nested `depth` deep (the stack-exhaustion input, at random depths). */
export function deepAmf0(depth: number): Buffer {
  const head = Buffer.concat([Buffer.from([0x03]), amf0.utf('a')]);
  return Buffer.concat([...Array.from({ length: depth }, () => head), amf0.null()]);
}

/** A random AMF3 value (after the AMF0 "switch to AMF3" marker, or raw in a type-15/17 body). */
export function randomAmf3(r: Rng): Buffer {
  switch (r.int(6)) {
    case 0: return amf3.int(r.pick(EDGE32));
    case 1: return amf3.str(randomString(r));
    case 2: return Buffer.concat([Buffer.from([r.int(0x0e)]), amf3.u29(r.pick(EDGE32)), r.bytes(r.int(12))]);
    case 3: return Buffer.from([0x0a, 0x0b, 0x01, 0x01]); // dynamic anonymous object, empty
    case 4: return Buffer.concat([Buffer.from([0x09]), amf3.u29(r.pick(EDGE32)), r.bytes(r.int(16))]); // array with lying count
    default: return r.bytes(r.int(24));
  }
}
