import { readFileSync } from 'node:fs';
import { amf0, amf3, command, message } from './wire-kit.ts';
import { Rng, EDGE32, ODD_STRINGS, randomAmf0, randomAmf3, deepAmf0 } from './fuzz-amf.ts';
import { splitSession, chunkAll, HANDSHAKE_BYTES, type Msg, type RecordedSession } from './fuzz-session.ts';

/*
 * Generators of malformed RTMP client input for fuzz.test.ts (issue 27.2): handshakes, chunk
 * headers (extended timestamps, 2- and 3-byte chunk stream ids, lying lengths), chunk sizes,
 * AMF0/AMF3 values, command sequences in odd orders, and mutations of real ffmpeg sessions
 * (fixtures/ffmpeg-*.bin). `fuzzCase(seed, i)` is a pure function: a failing case is replayed
 * from its seed and index alone.
 */

export interface FuzzCase {
  generator: string;
  /** Written in order, each its own write (so the server reads them apart, or together). */
  segments: Buffer[];
  /** Milliseconds to keep the connection open after the last write (0: end at once). */
  holdMs: number;
}

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const PUBLISH = fixture('ffmpeg-publish.bin');
const PLAY = fixture('ffmpeg-play.bin');
const RECORDED: RecordedSession[] = [splitSession(PUBLISH), splitSession(PLAY)];

const NAMES = ODD_STRINGS.filter((s) => !s.includes('legit'));
const COMMANDS = ['connect', 'createStream', 'publish', 'play', 'deleteStream', 'FCPublish', 'releaseStream', 'closeStream', 'play2', 'seek', 'pause', '_result', 'onStatus', '@setDataFrame', 'x'];

const cmd = (r: Rng, payload: Buffer, streamId = 0): Msg => ({ cid: r.chance(0.9) ? 3 : r.range(2, 70), type: r.chance(0.85) ? 20 : 17, streamId, timestamp: 0, payload: r.chance(0.85) ? payload : Buffer.concat([Buffer.from([0]), payload]) });
const validConnect = (r: Rng): Buffer => command('connect', 1, amf0.of({ app: r.chance(0.7) ? 'live' : r.pick(NAMES), type: 'nonprivate', tcUrl: r.chance(0.8) ? 'rtmp://127.0.0.1/live' : r.pick(NAMES), flashVer: 'FMLE/3.0' }));

function mediaOf(r: Rng): Msg[] {
  return RECORDED[0]!.messages.filter((m) => m.type === 8 || m.type === 9 || m.type === 18).filter(() => r.chance(0.1));
}

/** A fresh handshake, odd in part now and then. */
function handshake(r: Rng): Buffer {
  const hs = Buffer.from(RECORDED[r.int(2)]!.handshake);
  if (r.chance(0.1)) hs[0] = r.int(256);
  if (r.chance(0.1)) hs.fill(r.int(256), 1 + r.int(1536), 1537);
  return hs;
}

const generators: Record<string, (r: Rng) => Buffer[]> = {
  handshake(r) {
    const hs = handshake(r);
    switch (r.int(5)) {
      case 0: return [hs.subarray(0, r.int(HANDSHAKE_BYTES))];
      case 1: return [r.bytes(r.int(5000))];
      case 2: return [Buffer.concat([hs.subarray(0, 1537), r.bytes(r.int(3000))])];
      case 3: return [hs, r.bytes(r.range(1, 600))];
      default: {
        // the handshake in several reads, then the start of a session
        const parts = r.range(2, 6);
        const pieces = Array.from({ length: parts }, (_, i) => hs.subarray(Math.floor(i * hs.length / parts), Math.floor((i + 1) * hs.length / parts)));
        return [...pieces, ...chunkAll(RECORDED[0]!.messages.slice(0, 6))];
      }
    }
  },

  chunkHeaders(r) {
    const out = [handshake(r), ...chunkAll(RECORDED[0]!.messages.slice(0, r.int(7)))];
    for (let n = r.range(1, 20); n > 0; n--) {
      const fmt = r.int(4);
      const cid = r.pick([2, 3, 4, 5, 6, 8, r.range(2, 63), r.range(64, 319), r.range(320, 65599)]);
      const basic = cid < 64 ? Buffer.from([(fmt << 6) | cid]) : cid < 320 ? Buffer.from([fmt << 6, cid - 64]) : Buffer.from([(fmt << 6) | 1, (cid - 64) & 0xff, (cid - 64) >> 8]);
      const h = Buffer.alloc([11, 7, 3, 0][fmt]!);
      const ts = r.chance(0.3) ? 0xffffff : r.int(0x1000000);
      if (fmt <= 2) h.writeUIntBE(ts, 0, 3);
      if (fmt <= 1) { h.writeUIntBE(r.chance(0.5) ? r.pick(EDGE32) & 0xffffff : r.int(300), 3, 3); h[6] = r.chance(0.7) ? r.pick([1, 2, 3, 4, 5, 6, 8, 9, 15, 16, 17, 18, 19, 20, 22]) : r.int(256); }
      if (fmt === 0) h.writeUInt32LE(r.pick(EDGE32) >>> 0, 7);
      const ext = ts === 0xffffff ? Buffer.from([r.int(256), r.int(256), r.int(256), r.int(256)]) : Buffer.alloc(0);
      out.push(Buffer.concat([basic, h, ext, r.bytes(r.int(400))]));
    }
    return out;
  },

  chunkSize(r) {
    const msgs = [...RECORDED[r.int(2)]!.messages];
    const value = r.chance(0.7) ? r.pick(EDGE32) : r.int(0x10000);
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(value >>> 0);
    msgs.splice(r.int(msgs.length + 1), 0, { cid: 2, type: 1, streamId: 0, timestamp: 0, payload: r.chance(0.15) ? payload.subarray(0, r.int(4)) : payload });
    // cut as the receiver now expects, or at another size than it expects
    return [handshake(r), ...chunkAll(msgs, r.chance(0.5) ? undefined : r.pick([1, 2, 64, 128, 4096, 65536, r.range(1, 70000)]))];
  },

  amf(r) {
    const args = Array.from({ length: r.int(5) }, () => (r.chance(0.05) ? deepAmf0(r.range(100, 20_000)) : randomAmf0(r)));
    const name = r.chance(0.8) ? r.pick(COMMANDS) : r.pick(NAMES);
    const body = Buffer.concat([amf0.str(name), amf0.num(r.range(0, 10)), ...args]);
    const msgs: Msg[] = r.chance(0.5) ? [cmd(r, validConnect(r))] : [];
    switch (r.int(4)) {
      case 0: msgs.push(cmd(r, body, r.int(3))); break;
      case 1: msgs.push({ cid: 3, type: 17, streamId: 0, timestamp: 0, payload: Buffer.concat([Buffer.from([0]), amf0.str(name), amf0.num(1), amf3.switch(randomAmf3(r)), randomAmf3(r)]) }); break;
      case 2: msgs.push({ cid: 4, type: r.pick([15, 18, 16, 19]), streamId: 1, timestamp: 0, payload: Buffer.concat(r.chance(0.5) ? [amf0.str('@setDataFrame'), amf0.str('onMetaData'), ...args] : [randomAmf3(r), ...args]) }); break;
      default: msgs.push(cmd(r, command('connect', 1, randomAmf0(r), ...args)));
    }
    return [handshake(r), ...chunkAll(msgs)];
  },

  sequence(r) {
    const msgs: Msg[] = [];
    for (let n = r.range(1, 10); n > 0; n--) {
      const what = r.pick(['connect', 'createStream', 'publish', 'play', 'deleteStream', 'FCPublish', 'closeStream', 'media']);
      const sid = r.chance(0.8) ? 1 : r.pick(EDGE32);
      if (what === 'connect') msgs.push(cmd(r, validConnect(r)));
      else if (what === 'createStream') msgs.push(cmd(r, command('createStream', r.int(9), amf0.null())));
      else if (what === 'media') msgs.push(...mediaOf(r));
      else if (what === 'deleteStream') msgs.push(cmd(r, command('deleteStream', 0, amf0.null(), amf0.num(sid)), sid));
      else msgs.push(cmd(r, command(what, r.int(9), amf0.null(), ...(r.chance(0.9) ? [amf0.str(r.chance(0.5) ? 'fuzz.stream' : r.pick(NAMES))] : []), ...(what === 'publish' && r.chance(0.8) ? [amf0.str('live')] : [])), sid));
    }
    return [handshake(r), ...chunkAll(msgs)];
  },

  mutated(r) {
    const src = Buffer.from(r.chance(0.7) ? PUBLISH : PLAY);
    let b = r.chance(0.5) ? src.subarray(0, HANDSHAKE_BYTES + r.int(src.length - HANDSHAKE_BYTES)) : src;
    for (let n = r.range(1, 10); n > 0; n--) {
      const at = r.chance(0.9) ? r.range(HANDSHAKE_BYTES, Math.max(HANDSHAKE_BYTES, b.length - 1)) : r.int(b.length);
      switch (r.int(6)) {
        case 0: b[at] = b[at]! ^ (1 << r.int(8)); break;
        case 1: b[at] = r.pick([0, 0xff, 0x7f, 0x80, 0x03, 0xc3, 0x02, 0x14]); break;
        case 2: b = Buffer.concat([b.subarray(0, at), r.bytes(r.range(1, 32)), b.subarray(at)]); break;
        case 3: b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + r.range(1, 64)))]); break;
        case 4: b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + r.range(1, 200)), b.subarray(at)]); break;
        default: if (at + 4 <= b.length) b.writeUInt32BE(r.pick(EDGE32) >>> 0, at);
      }
    }
    return [b];
  },

  structural(r) {
    const msgs = RECORDED[r.chance(0.8) ? 0 : 1]!.messages.map((m) => ({ ...m }));
    for (let n = r.range(1, 5); n > 0 && msgs.length > 0; n--) {
      const i = r.int(msgs.length);
      const m = msgs[i]!;
      switch (r.int(7)) {
        case 0: msgs.splice(i, 1); break;
        case 1: msgs.splice(r.int(msgs.length), 0, { ...m }); break;
        case 2: m.type = r.chance(0.7) ? r.pick([1, 2, 3, 4, 5, 6, 8, 9, 15, 17, 18, 20, 22]) : r.int(256); break;
        case 3: m.cid = r.pick([2, 3, 63, 64, 319, 320, 65599]); break;
        case 4: m.timestamp = r.pick(EDGE32) >>> 0; break;
        case 5: m.payload = m.payload.subarray(0, r.int(m.payload.length + 1)); break;
        default: m.streamId = r.pick(EDGE32) >>> 0;
      }
    }
    const chunks = chunkAll(msgs);
    // a header that lies about the length of what follows
    if (r.chance(0.3)) chunks.splice(r.int(chunks.length + 1), 0, message(r.bytes(r.int(64)), { type: r.pick([8, 9, 18, 20]), cid: r.range(3, 8), length: r.pick(EDGE32) & 0xffffff }));
    return [handshake(r), ...chunks];
  },
};

/** Case `i` of the run seeded `seed`; the generator is chosen by the case's own randomness. */
export function fuzzCase(seed: number, i: number): FuzzCase {
  const r = new Rng((Math.imul(seed, 1_000_003) + i) >>> 0);
  const generator = r.pick(Object.keys(generators));
  const bytes = Buffer.concat(generators[generator]!(r));
  // 1 to 4 writes at random cut points: the parser must keep state across reads
  const cuts = Array.from({ length: r.int(4) }, () => r.int(bytes.length + 1)).sort((a, b) => a - b);
  const segments = [0, ...cuts, bytes.length].slice(1).map((end, k, ends) => bytes.subarray(k === 0 ? 0 : ends[k - 1], end)).filter((s) => s.length > 0);
  return { generator, segments, holdMs: r.chance(0.15) ? r.range(10, 150) : 0 };
}
