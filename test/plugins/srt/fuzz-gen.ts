import { readFileSync } from 'node:fs';
import { PASS, TOKEN } from './srt-helpers.ts';
import { Rng, EDGE32, mutateField, mutateExt, fuzzStreamId, hsreqBody, kmBody } from './fuzz-fields.ts';
import { CTRL, EXT, HS, DST_AT, buildHandshake, parseHandshake, sidEncode, control, data, isHandshake, type Handshake } from './fuzz-wire.ts';

/*
 * Generators of malformed SRT input for fuzz.test.ts (issue 27.2): inductions and conclusions
 * with odd fields, extension blocks (HSREQ, KMREQ, SID, unknown ones, lying lengths), streamids,
 * control and data packets to random socket ids, sessions that go on after a real handshake, and
 * byte-level mutations of a real ffmpeg session (fixtures/ffmpeg-srt.json, recorded by
 * fixtures/record-session.ts). `fuzzCase(seed, i)` is a pure function: a failing case is replayed
 * from its seed and index alone.
 */

export interface Step {
  bytes: Buffer;
  /** Before sending: write the SYN cookie of the service's last handshake answer into the packet. */
  cookie?: boolean;
  /** Before sending: address the packet to the socket the service accepted (its conclusion answer). */
  toPeer?: boolean;
  /** Before sending: address it to a legitimate client's socket (the running publisher's). */
  toLegit?: boolean;
  /** Wait this long (ms, at most) for an answer after sending. */
  awaitMs?: number;
  /** Send again when no answer came (a valid induction: the service must answer one). */
  retry?: boolean;
}

export interface FuzzCase {
  generator: string;
  /** Datagrams from one fresh UDP socket, in order. */
  steps: Step[];
  /** Milliseconds to keep the socket after the last step. */
  holdMs: number;
  /** Instead of datagrams: a real libsrt caller (the addon's caller mode) with this streamid. */
  caller?: { streamid: string; passphrase: string };
}

interface Datagram { from: 'client' | 'server'; hex: string }
const fixture = JSON.parse(readFileSync(new URL('./fixtures/ffmpeg-srt.json', import.meta.url), 'utf8')) as Record<'publish' | 'play', Datagram[]>;
const client = (s: Datagram[]) => s.filter((d) => d.from === 'client').map((d) => Buffer.from(d.hex, 'hex'));
const PUB = client(fixture.publish);
const PLAY = client(fixture.play);
const INDUCTION = [PUB[0]!, PLAY[0]!];
const CONCLUSION = [PUB[1]!, PLAY[1]!];
const PUB_DATA = PUB.slice(2).filter((b) => !(b[0]! & 0x80));
const AFTER = [...PUB.slice(2), ...PLAY.slice(2)];
const RECORDED = [...PUB, ...PLAY];
const KM = parseHandshake(PUB[1]!)!.exts.find((e) => e.type === EXT.kmreq)!.body;

const hs = (b: Buffer): Handshake => parseHandshake(b)!;

/** The recorded induction and conclusion of the publisher (or the player), parsed afresh. */
export function recordedHandshake(which: 'publish' | 'play'): { induction: Buffer; conclusion: Handshake } {
  const k = which === 'publish' ? 0 : 1;
  return { induction: INDUCTION[k]!, conclusion: hs(CONCLUSION[k]!) };
}

/** A streamid as the SID extension of `h`. */
export function setSid(h: Handshake, sid: Buffer): void {
  const body = sidEncode(sid);
  const at = h.exts.findIndex((e) => e.type === EXT.sid);
  if (at >= 0) h.exts[at] = { type: EXT.sid, body };
  else h.exts.push({ type: EXT.sid, body });
}
const anyU32 = (r: Rng) => (r.chance(0.5) ? r.pick(EDGE32) : r.int(0x100000000)) >>> 0;

/** A valid induction (answered with a cookie), sent until answered. */
function induction(r: Rng): Step {
  const h = hs(INDUCTION[r.int(2)]!);
  if (r.chance(0.3)) h.socket = r.int(0x40000000);
  return { bytes: buildHandshake(h), awaitMs: 250, retry: true };
}

/** A conclusion (recorded, then changed by `change`) after a valid induction, the cookie patched in. */
function handshakeSteps(r: Rng, change: (h: Handshake) => void): Step[] {
  const h = hs(CONCLUSION[r.chance(0.6) ? 0 : 1]!);
  // a publisher under a name of its own now and then (one publisher per name)
  if (r.chance(0.5)) setSid(h, Buffer.from(r.chance(0.5) ? `fz${r.int(40)},mode:publish,token:${TOKEN}` : `${r.pick(['legit', 'fuzz', `fz${r.int(40)}`])},token:${TOKEN}`));
  change(h);
  return [induction(r), { bytes: buildHandshake(h), cookie: r.chance(0.95), awaitMs: 250 }];
}

/** A control packet of any type with a body shaped for it now and then. */
function controlPacket(r: Rng, dst: number): Buffer {
  const type = r.chance(0.85) ? r.pick(Object.values(CTRL)) : r.int(0x8000);
  const words = (n: number) => { const b = Buffer.alloc(4 * n); for (let i = 0; i < n; i++) b.writeUInt32BE(anyU32(r), 4 * i); return b; };
  let body: Buffer;
  if (type === CTRL.nak && r.chance(0.7)) {
    // loss list: single numbers and ranges (high bit set on the first), now and then backwards or huge
    const list: number[] = [];
    for (let n = r.range(1, 40); n > 0; n--) {
      const a = r.int(0x80000000);
      if (r.chance(0.5)) list.push((a | 0x80000000) >>> 0, r.chance(0.7) ? (a + r.int(100000)) & 0x7fffffff : r.int(0x80000000));
      else list.push(r.chance(0.2) ? (a | 0x80000000) >>> 0 : a);
    }
    body = Buffer.alloc(list.length * 4);
    list.forEach((v, i) => body.writeUInt32BE(v, i * 4));
  } else if (type === CTRL.ack) body = words(r.pick([0, 1, 4, 6, 7, 8]));
  else if (type === CTRL.dropreq) body = words(r.pick([0, 1, 2, 3]));
  else if (type === CTRL.user) body = r.chance(0.5) ? hsreqBody(r) : kmBody(r, KM);
  else body = r.bytes(r.chance(0.7) ? r.int(32) : r.int(1600));
  return control(type, { subtype: r.chance(0.7) ? r.pick([0, 1, 2, 3, 4, 0xffff]) : r.int(0x10000), info: anyU32(r), ts: anyU32(r), dst, body });
}

/** A data packet: any sequence, flags (packet position, order, key, retransmit) and payload. */
function dataPacket(r: Rng, dst: number): Buffer {
  const payload = r.chance(0.3) && PUB_DATA.length ? PUB_DATA[r.int(PUB_DATA.length)]!.subarray(16) : r.bytes(r.chance(0.9) ? r.int(1500) : r.int(9000));
  return data(anyU32(r), anyU32(r), anyU32(r), dst, payload);
}

/** Byte-level changes: bit flips, odd bytes, insertions, deletions, repeats, 32-bit edge values. */
function mutateBytes(r: Rng, src: Buffer, from = 0): Buffer {
  let b = Buffer.from(src);
  for (let n = r.range(1, 8); n > 0 && b.length > 0; n--) {
    const at = r.chance(0.85) && b.length > from ? r.range(from, b.length - 1) : r.int(b.length);
    switch (r.int(6)) {
      case 0: b[at] = b[at]! ^ (1 << r.int(8)); break;
      case 1: b[at] = r.pick([0, 0xff, 0x7f, 0x80, 0x01]); break;
      case 2: b = Buffer.concat([b.subarray(0, at), r.bytes(r.range(1, 32)), b.subarray(at)]); break;
      case 3: b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + r.range(1, 64)))]); break;
      case 4: b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + r.range(1, 200)), b.subarray(at)]); break;
      default: if (at + 4 <= b.length) b.writeUInt32BE(r.pick(EDGE32) >>> 0, at);
    }
  }
  return b;
}

/** Where control and data packets go: nowhere known, the running publisher, or 0. */
function target(r: Rng): { dst: number; toLegit: boolean } {
  const toLegit = r.chance(0.2);
  return { dst: r.chance(0.2) ? 0 : r.chance(0.5) ? r.pick(EDGE32) >>> 0 : r.int(0x80000000), toLegit };
}

const generators: Record<string, (r: Rng) => Step[]> = {
  induction(r) {
    const h = hs(INDUCTION[r.int(2)]!);
    for (let n = r.range(1, 4); n > 0; n--) mutateField(r, h);
    if (r.chance(0.2)) h.exts.push({ type: r.pick([EXT.hsreq, EXT.sid, EXT.kmreq, r.int(0x10000)]), body: r.bytes(r.int(100)) });
    let b = buildHandshake(h);
    if (r.chance(0.15)) b = b.subarray(0, r.int(b.length));
    else if (r.chance(0.1)) b = Buffer.concat([b, r.bytes(r.range(1, 1500))]);
    return Array.from({ length: r.range(1, 3) }, () => ({ bytes: b, awaitMs: 100 }));
  },

  conclusion(r) {
    const steps = handshakeSteps(r, (h) => { for (let n = r.range(1, 3); n > 0; n--) mutateField(r, h); });
    if (r.chance(0.3)) steps.push(...PUB_DATA.slice(0, r.range(1, PUB_DATA.length)).map((bytes) => ({ bytes, toPeer: true })));
    return steps;
  },

  extensions(r) {
    return handshakeSteps(r, (h) => {
      for (let n = r.range(1, 4); n > 0; n--) mutateExt(r, h.exts, KM);
      if (r.chance(0.2)) h.extension = r.int(0x10000);
      if (r.chance(0.1)) h.tail = r.bytes(r.range(1, 3));
    });
  },

  streamid(r) {
    return handshakeSteps(r, (h) => {
      const sid = fuzzStreamId(r);
      if (r.chance(0.85)) setSid(h, sid);
      else h.exts.push({ type: EXT.sid, body: r.chance(0.5) ? sid : sidEncode(sid), words: r.chance(0.5) ? undefined : r.pick([0, 1, 128, 129, 0xffff]) });
    });
  },

  control(r) {
    return Array.from({ length: r.range(1, 8) }, () => {
      const t = target(r);
      return { bytes: controlPacket(r, t.dst), toLegit: t.toLegit, awaitMs: r.chance(0.2) ? 20 : undefined };
    });
  },

  data(r) {
    return Array.from({ length: r.range(1, 8) }, () => {
      const t = target(r);
      return { bytes: dataPacket(r, t.dst), toLegit: t.toLegit };
    });
  },

  session(r) {
    const steps = handshakeSteps(r, () => {});
    for (let n = r.range(1, 20); n > 0; n--) {
      const pick = r.int(5);
      const bytes = pick === 0 ? controlPacket(r, 0) : pick === 1 ? dataPacket(r, 0)
        : pick === 2 ? buildHandshake(hs(CONCLUSION[r.int(2)]!)) : mutateBytes(r, AFTER[r.int(AFTER.length)]!, 16);
      steps.push({ bytes, toPeer: true, awaitMs: r.chance(0.1) ? 30 : undefined });
    }
    return steps;
  },

  mutated(r) {
    const src = RECORDED[r.int(RECORDED.length)]!;
    const bytes = mutateBytes(r, src, isHandshake(src) ? 16 : 0);
    if (isHandshake(src) && src.readUInt32BE(36) === HS.conclusion) return [induction(r), { bytes, cookie: r.chance(0.8), awaitMs: 100 }];
    if (!isHandshake(src) && r.chance(0.5)) return [...handshakeSteps(r, () => {}), { bytes, toPeer: true }];
    return [{ bytes, awaitMs: 50 }];
  },
};

/** A streamid a real caller sends (a JS string: the caller's UTF-8). */
function callerCase(r: Rng): FuzzCase['caller'] {
  const streamid = fuzzStreamId(r).toString(r.chance(0.7) ? 'utf8' : 'latin1');
  return { streamid, passphrase: r.chance(0.8) ? PASS : r.pick(['', 'wrong-passphrase', PASS.slice(0, 10)]) };
}

export const GENERATORS = [...Object.keys(generators), 'caller'].sort();

/**
 * Case `i` of the run seeded `seed`; the generator is chosen by the case's own randomness, among
 * `only` when given (other cases then: a replay needs the same `only`).
 */
export function fuzzCase(seed: number, i: number, only?: readonly string[]): FuzzCase {
  const r = new Rng((Math.imul(seed, 1_000_003) + i) >>> 0);
  const names = Object.keys(generators).filter((g) => !only || only.includes(g));
  // the real caller is slow (a blocking connect and its worker): a few percent of the cases
  if ((!only || only.includes('caller')) && (r.chance(0.03) || names.length === 0)) return { generator: 'caller', steps: [], holdMs: 0, caller: callerCase(r) };
  const generator = r.pick(names);
  const steps = generators[generator]!(r).map((s) => (s.bytes.length > 0 || !s.toPeer ? s : { ...s, toPeer: false }));
  for (const s of steps) if ((s.toPeer || s.toLegit) && s.bytes.length < DST_AT + 4) s.bytes = Buffer.concat([s.bytes, Buffer.alloc(DST_AT + 4 - s.bytes.length)]);
  return { generator, steps, holdMs: r.chance(0.1) ? r.range(10, 200) : 0 };
}
