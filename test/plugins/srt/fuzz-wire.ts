/*
 * SRT packets as the fuzz suite reads and builds them (the protocol's draft, section 3): the
 * 16-byte header, the handshake's 48-byte body and its extension blocks. Pure functions, no I/O.
 */

/** Control packet types (header bits 1-15). */
export const CTRL = { handshake: 0, keepalive: 1, ack: 2, nak: 3, congestion: 4, shutdown: 5, ackack: 6, dropreq: 7, peererror: 8, user: 0x7fff } as const;
/** Handshake extension block types. */
export const EXT = { hsreq: 1, hsrsp: 2, kmreq: 3, kmrsp: 4, sid: 5, congestion: 6, filter: 7, group: 8 } as const;
/** Handshake types. */
export const HS = { induction: 1, conclusion: 0xffffffff, waveahand: 0, agreement: 0xfffffffe } as const;

/** Byte offsets in a packet: destination socket id, the handshake's socket id and SYN cookie, its extensions. */
export const DST_AT = 12;
export const HS_SOCKET_AT = 16 + 24;
export const HS_COOKIE_AT = 16 + 28;
export const HS_TYPE_AT = 16 + 20;
export const EXT_AT = 16 + 48;

export interface ExtBlock {
  type: number;
  body: Buffer;
  /** Length written in the block header (in 4-byte words) instead of the body's own. */
  words?: number;
}

export interface Handshake {
  /** The 16-byte packet header, as is. */
  header: Buffer;
  version: number;
  encryption: number;
  extension: number;
  seq: number;
  mtu: number;
  window: number;
  type: number;
  socket: number;
  cookie: number;
  peerIp: Buffer;
  exts: ExtBlock[];
  /** Bytes after the last whole extension block (none in a well-formed packet). */
  tail: Buffer;
}

export const isControl = (b: Buffer): boolean => b.length >= 16 && (b[0]! & 0x80) !== 0;
export const controlType = (b: Buffer): number => b.readUInt16BE(0) & 0x7fff;
export const isHandshake = (b: Buffer): boolean => b.length >= EXT_AT && isControl(b) && controlType(b) === CTRL.handshake;

/** The handshake in `b`, or undefined when `b` is not one. */
export function parseHandshake(b: Buffer): Handshake | undefined {
  if (!isHandshake(b)) return undefined;
  const exts: ExtBlock[] = [];
  let p = EXT_AT;
  while (p + 4 <= b.length) {
    const len = b.readUInt16BE(p + 2) * 4;
    if (p + 4 + len > b.length) break;
    exts.push({ type: b.readUInt16BE(p), body: Buffer.from(b.subarray(p + 4, p + 4 + len)) });
    p += 4 + len;
  }
  return {
    header: Buffer.from(b.subarray(0, 16)),
    version: b.readUInt32BE(16), encryption: b.readUInt16BE(20), extension: b.readUInt16BE(22),
    seq: b.readUInt32BE(24), mtu: b.readUInt32BE(28), window: b.readUInt32BE(32), type: b.readUInt32BE(36),
    socket: b.readUInt32BE(40), cookie: b.readUInt32BE(44), peerIp: Buffer.from(b.subarray(48, 64)),
    exts, tail: Buffer.from(b.subarray(p)),
  };
}

/** The packet of `h` (lengths as each block says, or its `words` when set). */
export function buildHandshake(h: Handshake): Buffer {
  const cif = Buffer.alloc(48);
  cif.writeUInt32BE(h.version >>> 0, 0);
  cif.writeUInt16BE(h.encryption & 0xffff, 4);
  cif.writeUInt16BE(h.extension & 0xffff, 6);
  cif.writeUInt32BE(h.seq >>> 0, 8);
  cif.writeUInt32BE(h.mtu >>> 0, 12);
  cif.writeUInt32BE(h.window >>> 0, 16);
  cif.writeUInt32BE(h.type >>> 0, 20);
  cif.writeUInt32BE(h.socket >>> 0, 24);
  cif.writeUInt32BE(h.cookie >>> 0, 28);
  h.peerIp.copy(cif, 32, 0, 16);
  const exts = h.exts.map((e) => {
    const head = Buffer.alloc(4);
    head.writeUInt16BE(e.type & 0xffff, 0);
    head.writeUInt16BE((e.words ?? Math.ceil(e.body.length / 4)) & 0xffff, 2);
    const pad = (4 - (e.body.length % 4)) % 4;
    return Buffer.concat([head, e.body, Buffer.alloc(pad)]);
  });
  return Buffer.concat([h.header, cif, ...exts, h.tail]);
}

/**
 * A streamid as the SID block carries it: libsrt writes the string as 32-bit words in host order,
 * so on the wire each group of 4 bytes is reversed; padded with NULs to whole words.
 */
export function sidEncode(s: Buffer): Buffer {
  const out = Buffer.alloc(Math.ceil(s.length / 4) * 4);
  s.copy(out);
  for (let i = 0; i < out.length; i += 4) out.subarray(i, i + 4).reverse();
  return out;
}

/** The streamid in a SID block's body (trailing NULs dropped). */
export function sidDecode(body: Buffer): Buffer {
  const out = Buffer.from(body);
  for (let i = 0; i + 4 <= out.length; i += 4) out.subarray(i, i + 4).reverse();
  let end = out.length;
  while (end > 0 && out[end - 1] === 0) end--;
  return out.subarray(0, end);
}

/** A control packet: type, subtype, type-specific word, timestamp, destination, body. */
export function control(type: number, opts: { subtype?: number; info?: number; ts?: number; dst: number; body?: Buffer }): Buffer {
  const h = Buffer.alloc(16);
  h.writeUInt16BE(0x8000 | (type & 0x7fff), 0);
  h.writeUInt16BE((opts.subtype ?? 0) & 0xffff, 2);
  h.writeUInt32BE((opts.info ?? 0) >>> 0, 4);
  h.writeUInt32BE((opts.ts ?? 0) >>> 0, 8);
  h.writeUInt32BE(opts.dst >>> 0, 12);
  return Buffer.concat([h, opts.body ?? Buffer.alloc(0)]);
}

/** A data packet: sequence number (31 bits), the message word (PP O KK R msgno), timestamp, destination. */
export function data(seq: number, msg: number, ts: number, dst: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(16);
  h.writeUInt32BE(seq & 0x7fffffff, 0);
  h.writeUInt32BE(msg >>> 0, 4);
  h.writeUInt32BE(ts >>> 0, 8);
  h.writeUInt32BE(dst >>> 0, 12);
  return Buffer.concat([h, payload]);
}
