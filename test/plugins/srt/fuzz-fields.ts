import { Rng, EDGE32 } from '../rtmp/fuzz-amf.ts';
import { TOKEN } from './srt-helpers.ts';
import { EXT, HS, type ExtBlock, type Handshake } from './fuzz-wire.ts';

/*
 * Odd values for the SRT fuzz generators (fuzz-gen.ts): handshake fields, extension blocks and
 * streamids. Pure functions of the generator's state.
 */

export { Rng, EDGE32 };

/** Values for a handshake's 32-bit fields, per field, beside random ones. */
const ODD: Record<string, number[]> = {
  version: [0, 1, 3, 4, 5, 6, 0x7fffffff, 0xffffffff],
  encryption: [0, 1, 2, 3, 4, 5, 0x7fff, 0xffff],
  extension: [0, 1, 2, 3, 4, 5, 7, 0x4a17, 0x8000, 0xffff],
  seq: [0, 1, 0x7fffffff, 0x80000000, 0xffffffff],
  mtu: [0, 1, 16, 32, 76, 576, 1500, 1501, 9000, 65535, 0x10000, 0xffffffff],
  window: [0, 1, 2, 25, 8192, 0x7fffffff, 0xffffffff],
  type: [HS.induction, HS.conclusion, HS.waveahand, HS.agreement, 2, 1000, 1001, 1002, 1017, 1099, 0x7fffffff],
  socket: [0, 1, 0x3fffffff, 0x40000000, 0x7fffffff, 0xffffffff],
  cookie: [0, 1, 0xffffffff],
};
export const FIELDS = Object.keys(ODD) as Array<keyof typeof ODD>;

/** Sets one field of `h` (or the peer IP, or a header word) to an odd or random value. */
export function mutateField(r: Rng, h: Handshake): string {
  const which = r.int(FIELDS.length + 2);
  if (which === FIELDS.length) {
    h.peerIp = r.pick([Buffer.alloc(16), Buffer.alloc(16, 0xff), Buffer.from('00000000000000000000ffff7f000001', 'hex'), r.bytes(16)]);
    return 'peerIp';
  }
  if (which === FIELDS.length + 1) {
    h.header.writeUInt32BE((r.chance(0.5) ? r.pick(EDGE32) : r.int(0x100000000)) >>> 0, 4 * r.int(4));
    h.header[0] = h.header[0]! | 0x80; // still a control packet
    return 'header';
  }
  const f = FIELDS[which]!;
  const v = r.chance(0.6) ? r.pick(ODD[f]!) : r.int(0x100000000);
  (h as unknown as Record<string, number>)[f] = v >>> 0;
  return f;
}

/** A handshake-request body (HSREQ/HSRSP): SRT version, flags, receive and send latency. */
export function hsreqBody(r: Rng): Buffer {
  const b = Buffer.alloc(r.chance(0.85) ? 12 : r.int(24));
  if (b.length >= 4) b.writeUInt32BE(r.pick([0x010501, 0x010000, 0x010300, 0, 0xffffffff, r.int(0x100000000)]) >>> 0, 0);
  if (b.length >= 8) b.writeUInt32BE(r.pick([0xbf, 0, 0xff, 0xffffffff, r.int(0x100000000)]) >>> 0, 4);
  if (b.length >= 12) b.writeUInt32BE(r.pick([0x01900190, 0, 0xffffffff, r.int(0x100000000)]) >>> 0, 8);
  return b;
}

/** A key-material message (KMREQ) made odd from a recorded one: header bytes, lengths, wrap. */
export function kmBody(r: Rng, recorded: Buffer): Buffer {
  const b = Buffer.from(recorded);
  for (let n = r.range(1, 4); n > 0; n--) {
    switch (r.int(6)) {
      case 0: b[r.int(16)] = r.pick([0, 0xff, 0x10, 0x12, 0x20, 0x29, r.int(256)]); break; // version, PT, sign, KK, KEKI, cipher...
      case 1: b[r.pick([14, 15])] = r.pick([0, 1, 2, 3, 4, 5, 8, 0xff]); break; // salt and key lengths (in words)
      case 2: b[r.int(b.length)] ^= 1 << r.int(8); break;
      case 3: return b.subarray(0, r.int(b.length));
      case 4: return Buffer.concat([b, r.bytes(r.range(1, 300))]);
      default: b.fill(r.int(256), 16 + r.int(Math.max(1, b.length - 16)));
    }
  }
  return b;
}

/** Streamid pieces a parser may treat specially. */
const ODD_IDS = [
  '', ',', ',,,,', 'mode:publish', ',mode:publish', 'x,mode:', 'x,mode:play', 'x,mode:publish,mode:request', 'x,token:', 'x,token:,token:',
  '..', '../..', '/../../etc/passwd', 'a/../b', '.', '%', '%z', '%2', '%00', '%2C%2C', '%25', '%ff%fe', 'x%2Cmode%3Apublish', '#!::', '#!:',
  '#!::r=', '#!::r=,m=publish', '#!::m=publish', '#!::r=x,m=play', '#!::r=x,m=publish,token=' + TOKEN, '#!:r=x,m=request', '#!::=,=,=',
  '#!::r=a,r=b,r=c', '#!::u=admin,h=host,s=sess,t=stream', '__proto__', 'constructor', 'legit\u0000x', '\u202e', 'é✓😀', '{srt}', '$(id)',
];

/** A streamid as bytes: odd pieces, NULs, invalid UTF-8, long or comma-heavy, with the right token or not. */
export function fuzzStreamId(r: Rng): Buffer {
  const token = r.chance(0.5) ? TOKEN : r.pick(['', 'tok', 'tok,en,', 'TOK,EN', r.bytes(r.int(20)).toString('latin1')]);
  const name = () => r.pick([
    () => r.pick(ODD_IDS), () => `fz${r.int(40)}`, () => 'legit', () => 'a'.repeat(r.range(100, 600)),
    () => ','.repeat(r.range(10, 500)), () => 'x,'.repeat(r.range(5, 200)), () => r.bytes(r.int(40)).toString('latin1'),
  ])();
  switch (r.int(8)) {
    case 0: return Buffer.from(`${name()},mode:${r.pick(['publish', 'request', 'play', '', 'PUBLISH'])},token:${token}`);
    case 1: return Buffer.from(`${name()},token:${token}`);
    case 2: return Buffer.from(`#!::r=${name()},m=${r.pick(['publish', 'request', 'x'])},token=${token}${r.chance(0.3) ? `,${'k=v,'.repeat(r.int(100))}` : ''}`);
    case 3: return Buffer.concat([Buffer.from(name()), Buffer.from([0]), Buffer.from(`,mode:publish,token:${token}`)]);
    case 4: return Buffer.concat([Buffer.from('fz'), r.pick([Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0x80]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xe2, 0x82]), r.bytes(8)]), Buffer.from(`,mode:publish,token:${token}`)]);
    case 5: return Buffer.from(encodeURIComponent(`${name()},mode:${r.pick(['publish', 'request'])},token:${token}`).replace(/%2C/g, r.pick(['%2C', '%2c', ',', '%', '%2'])));
    case 6: return r.bytes(r.int(r.chance(0.8) ? 600 : 2000));
    default: return Buffer.from(name());
  }
}

/** Changes one extension block of `exts` in place (or adds, drops, duplicates one). */
export function mutateExt(r: Rng, exts: ExtBlock[], km: Buffer): void {
  const i = r.int(Math.max(1, exts.length));
  const e = exts[i];
  switch (r.int(10)) {
    case 0: exts.splice(i, 1); break;
    case 1: if (e) exts.splice(r.int(exts.length + 1), 0, { ...e }); break;
    case 2: if (e) e.words = r.pick([0, 1, 2, 0xff, 0x100, 0x7fff, 0xffff, Math.ceil(e.body.length / 4) + r.range(-2, 2)]) & 0xffff; break;
    case 3: if (e) e.body = e.body.subarray(0, r.int(e.body.length)); break;
    case 4: if (e) e.body = Buffer.concat([e.body, r.bytes(r.range(1, 400))]); break;
    case 5: if (e) e.type = r.chance(0.7) ? r.pick([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x7fff, 0xffff]) : r.int(0x10000); break;
    case 6: exts.splice(r.int(exts.length + 1), 0, { type: EXT.hsreq, body: hsreqBody(r) }); break;
    case 7: exts.splice(r.int(exts.length + 1), 0, { type: EXT.kmreq, body: kmBody(r, km) }); break;
    case 8: exts.splice(r.int(exts.length + 1), 0, {
      type: r.pick([EXT.congestion, EXT.filter, EXT.group, EXT.hsrsp, EXT.kmrsp]),
      body: r.chance(0.6) ? Buffer.from(r.pick(['live', 'file', 'fec,cols:10,rows:5', 'fec,cols:0', 'fec,' + 'x'.repeat(300), ''])) : r.bytes(r.int(200)),
    }); break;
    default: if (e) e.body[r.int(Math.max(1, e.body.length))] ^= 1 << r.int(8);
  }
}
