/*
 * The RTMP chunk stream (RTMP 1.0 section 5.3), ours: messages reassembled from the client's
 * chunks, each with a buffer of its own, with the bounds checked before anything is allocated
 * (message sizes, chunk stream count, unfinished bytes, the chunk size), and messages written as
 * chunks. Timestamps as node-media-server 4.4.3 read them (a delta is added to the chunk stream's
 * clock for every header but type 0, the extended timestamp repeated on continuation chunks), so
 * players and processes see the stamps they saw before this layer was ours.
 */

/** Commands and data messages are a few hundred bytes in every known client (connect, publish, onMetaData). */
export const MAX_COMMAND_MESSAGE = 64 * 1024;
/** Clients use chunk streams 2 to 8; the protocol allows 65,599, each with its own state. */
export const MAX_CHUNK_STREAMS = 64;
/** The chunk size of what the server sends (announced by Set Chunk Size at `connect`). */
export const OUT_CHUNK_SIZE = 0xffff;

/** The most bytes of unfinished messages all connections hold together (`UnfinishedBudget`). */
export const MAX_UNFINISHED_BYTES = 256 * 1024 * 1024;

/** Bytes of unfinished messages held by every connection, shared: a connection whose chunk would pass `max` is closed. */
export interface UnfinishedBudget { held: number; readonly max: number }

/** A bound or rule of ours a client broke: the message is why its connection closes. */
export class WireRefusal extends Error {}

/** One complete message from the client. */
export interface InMessage {
  type: number;
  length: number;
  /** Message stream id (of the last type 0 header of its chunk stream). */
  streamId: number;
  /** Its timestamp, the chunk stream's clock. */
  clock: number;
  /** `length` bytes of body, then 16 zero bytes (the tag parser peeks at fixed offsets of short messages). */
  payload: Buffer;
}

interface ChunkStream { timestamp: number; length: number; type: number; streamId: number; clock: number; payload?: Buffer; bytes: number }

const HEADER_SIZE = [11, 7, 3, 0];
const EXTENDED = 0xffffff;

/** Reassembles a client's chunks into messages; `feed` throws a `WireRefusal` when a bound is broken. */
export class ChunkReader {
  #streams = new Map<number, ChunkStream>();
  #chunkSize = 128;
  #rest: Buffer | undefined;
  #cur: ChunkStream | undefined;
  readonly #maxMedia: number;
  readonly #onMessage: (m: InMessage) => void;
  readonly #budget: UnfinishedBudget | undefined;
  /** What this connection holds of the budget (the received bytes of its unfinished messages). */
  #charged = 0;

  constructor(maxMediaMessage: number, onMessage: (m: InMessage) => void, budget?: UnfinishedBudget) {
    this.#maxMedia = maxMediaMessage;
    this.#onMessage = onMessage;
    this.#budget = budget;
  }

  /** Gives back what this connection held (it closed). */
  release(): void {
    if (this.#budget) this.#budget.held -= this.#charged;
    this.#charged = 0;
  }

  feed(data: Buffer): void {
    const buf = this.#rest ? Buffer.concat([this.#rest, data]) : data;
    this.#rest = undefined;
    let i = 0;
    while (i < buf.length) {
      if (!this.#cur) {
        const used = this.#header(buf, i);
        // a header split across reads (at most 18 bytes) waits for the rest
        if (used < 0) { this.#rest = Buffer.from(buf.subarray(i)); return; }
        i += used;
      }
      i += this.#payload(this.#cur!, buf, i);
    }
  }

  /** Reads the chunk header at `i`: the bytes it took, or -1 when it is not all there yet. */
  #header(b: Buffer, i: number): number {
    const csid0 = b[i]! & 0x3f;
    const fmt = b[i]! >> 6;
    const basic = csid0 === 0 ? 2 : csid0 === 1 ? 3 : 1;
    const size = basic + HEADER_SIZE[fmt]!;
    if (i + size > b.length) return -1;
    const csid = basic === 1 ? csid0 : basic === 2 ? 64 + b[i + 1]! : 64 + b[i + 1]! + b[i + 2]! * 256;
    let s = this.#streams.get(csid);
    if (!s) {
      if (this.#streams.size >= MAX_CHUNK_STREAMS) throw new WireRefusal(`more than ${MAX_CHUNK_STREAMS} chunk streams`);
      s = { timestamp: 0, length: 0, type: 0, streamId: 0, clock: 0, bytes: 0 };
      this.#streams.set(csid, s);
    }
    let o = i + basic;
    if (fmt <= 1 && s.bytes > 0) throw new WireRefusal('a message header in the middle of a message');
    if (fmt <= 2) { s.timestamp = b.readUIntBE(o, 3); o += 3; }
    if (fmt <= 1) { s.length = b.readUIntBE(o, 3); s.type = b[o + 3]!; o += 4; }
    if (fmt === 0) { s.streamId = b.readUInt32LE(o); o += 4; }
    let stamp = s.timestamp;
    if (stamp === EXTENDED) {
      if (o + 4 > b.length) return -1;
      stamp = b.readUInt32BE(o);
      o += 4;
    }
    if (s.bytes === 0) {
      s.clock = fmt === 0 ? stamp : s.clock + stamp;
      this.#alloc(s);
    }
    this.#cur = s;
    return o - i;
  }

  /** A fresh buffer for the message starting on `s`, once the bounds allow it. */
  #alloc(s: ChunkStream): void {
    const { length, type } = s;
    const media = type === 8 || type === 9;
    const max = media ? this.#maxMedia : MAX_COMMAND_MESSAGE;
    if (length > max) throw new WireRefusal(`message of type ${type} with ${length} bytes (at most ${max})`);
    // protocol control messages carry a 4-byte value (Set Peer Bandwidth 5)
    if (type >= 1 && type <= 6 && type !== 4 && length < 4) throw new WireRefusal(`protocol control message ${type} with ${length} bytes`);
    let held = 0;
    for (const other of this.#streams.values()) if (other !== s && other.payload) held += other.length;
    if (held + length > 2 * this.#maxMedia) throw new WireRefusal(`more than ${2 * this.#maxMedia} bytes of unfinished messages`);
    // allocUnsafe: every byte up to `length` is written before it is read, and the pages of a
    // large message are committed as its bytes arrive, not when a header announces them
    s.payload = Buffer.allocUnsafe(length + 16).fill(0, length);
  }

  /** Copies the payload bytes of the current chunk; a complete message is handed on. */
  #payload(s: ChunkStream, b: Buffer, i: number): number {
    const n = Math.min(this.#chunkSize - (s.bytes % this.#chunkSize), s.length - s.bytes, b.length - i);
    // the header ended the read: the payload comes with the next one
    if (n === 0 && s.bytes < s.length) return 0;
    const budget = this.#budget;
    // a message that ends in this chunk never waits: only the bytes of one that goes on are held
    const held = s.bytes + n < s.length;
    if (budget && held) {
      if (budget.held + n > budget.max) throw new WireRefusal(`the service holds ${budget.held} bytes of unfinished RTMP messages (at most ${budget.max})`);
      budget.held += n;
      this.#charged += n;
    }
    b.copy(s.payload!, s.bytes, i, i + n);
    s.bytes += n;
    if (s.bytes >= s.length) {
      this.#cur = undefined;
      const payload = s.payload!;
      s.payload = undefined;
      // what the earlier chunks of this message held goes back
      const before = s.bytes - n;
      if (budget && before > 0) {
        budget.held -= before;
        this.#charged -= before;
      }
      s.bytes = 0;
      // as node-media-server: a message past the 32-bit clock is dropped
      if (s.clock <= 0xffffffff) this.#message({ type: s.type, length: s.length, streamId: s.streamId, clock: s.clock, payload });
    } else if (s.bytes % this.#chunkSize === 0) {
      this.#cur = undefined;
    }
    return n;
  }

  #message(m: InMessage): void {
    if (m.type === 1) {
      const size = m.payload.readUInt32BE(0);
      // 0 would stall the reader for good; the top bit is reserved
      if (!(size >= 1 && size <= 0x7fffffff)) throw new WireRefusal(`Set Chunk Size ${size}`);
      this.#chunkSize = size;
      return;
    }
    this.#onMessage(m);
  }
}

/** What `writeMessage` sends: a type 0 header on chunk stream `cid`, then the body in chunks of 65535 bytes. */
export interface OutMessage { cid: number; type: number; streamId: number; timestamp: number; body: Buffer; size: number }

function basicHeader(fmt: number, cid: number): Buffer {
  if (cid >= 64 + 255) return Buffer.from([(fmt << 6) | 1, (cid - 64) & 0xff, ((cid - 64) >> 8) & 0xff]);
  if (cid >= 64) return Buffer.from([fmt << 6, (cid - 64) & 0xff]);
  return Buffer.from([(fmt << 6) | cid]);
}

/** The chunks of one message, as one Buffer (built once, shared by every reader of a packet). */
export function writeMessage(m: OutMessage): Buffer {
  const extended = m.timestamp >= EXTENDED;
  const first = basicHeader(0, m.cid);
  const next = basicHeader(3, m.cid);
  const stamp = extended ? 4 : 0;
  const chunks = Math.max(1, Math.ceil(m.size / OUT_CHUNK_SIZE));
  const out = Buffer.alloc(first.length + 11 + stamp + m.size + (chunks - 1) * (next.length + stamp));
  let o = first.copy(out, 0);
  out.writeUIntBE(extended ? EXTENDED : m.timestamp, o, 3);
  out.writeUIntBE(m.size, o + 3, 3);
  out[o + 6] = m.type;
  out.writeUInt32LE(m.streamId, o + 7);
  o += 11;
  if (extended) o = out.writeUInt32BE(m.timestamp, o);
  for (let done = 0; done < m.size;) {
    if (done > 0) {
      o += next.copy(out, o);
      if (extended) o = out.writeUInt32BE(m.timestamp, o);
    }
    const n = Math.min(OUT_CHUNK_SIZE, m.size - done);
    m.body.copy(out, o, done, done + n);
    o += n;
    done += n;
  }
  return out;
}
