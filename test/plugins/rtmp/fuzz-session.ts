import { message } from './wire-kit.ts';

/*
 * A recorded client session (fixtures/ffmpeg-*.bin) split into its handshake and messages, so
 * the fuzz generators can mutate it message by message and chunk it again their own way.
 */

export const HANDSHAKE_BYTES = 1 + 1536 + 1536;

export interface Msg {
  cid: number;
  type: number;
  streamId: number;
  timestamp: number;
  payload: Buffer;
}

export interface RecordedSession {
  /** C0 C1 C2 as the client sent them. */
  handshake: Buffer;
  messages: Msg[];
}

interface Pending { type: number; streamId: number; timestamp: number; length: number; ext: boolean; parts: Buffer[]; got: number }

/** Splits a well-formed client byte stream (as ffmpeg sent it) into handshake and messages. */
export function splitSession(bytes: Buffer): RecordedSession {
  const messages: Msg[] = [];
  const streams = new Map<number, Pending>();
  let chunkSize = 128;
  let p = HANDSHAKE_BYTES;
  while (p < bytes.length) {
    const fmt = bytes[p]! >> 6;
    let cid = bytes[p]! & 0x3f;
    p++;
    if (cid === 0) cid = 64 + bytes[p++]!;
    else if (cid === 1) { cid = 64 + bytes[p]! + bytes[p + 1]! * 256; p += 2; }
    const s: Pending = streams.get(cid) ?? { type: 0, streamId: 0, timestamp: 0, length: 0, ext: false, parts: [], got: 0 };
    streams.set(cid, s);
    if (fmt <= 2) {
      const ts = bytes.readUIntBE(p, 3);
      s.ext = ts === 0xffffff;
      if (!s.ext) s.timestamp = fmt === 0 ? ts : s.timestamp + ts;
      p += 3;
    }
    if (fmt <= 1) { s.length = bytes.readUIntBE(p, 3); s.type = bytes[p + 3]!; p += 4; }
    if (fmt === 0) { s.streamId = bytes.readUInt32LE(p); p += 4; }
    if (s.ext) { s.timestamp = bytes.readUInt32BE(p); p += 4; }
    const n = Math.min(chunkSize, s.length - s.got, bytes.length - p);
    s.parts.push(bytes.subarray(p, p + n));
    s.got += n;
    p += n;
    if (s.got < s.length) continue;
    const payload = Buffer.concat(s.parts);
    s.parts = [];
    s.got = 0;
    messages.push({ cid, type: s.type, streamId: s.streamId, timestamp: s.timestamp, payload });
    if (s.type === 1 && payload.length >= 4) chunkSize = payload.readUInt32BE(0) & 0x7fffffff;
  }
  return { handshake: bytes.subarray(0, HANDSHAKE_BYTES), messages };
}

/**
 * Chunks messages again, each at the chunk size the receiver expects at that point (128, then
 * what the Set Chunk Size messages in the list say), or at `cutAt` for every message when a
 * generator wants sender and receiver to disagree.
 */
export function chunkAll(messages: Msg[], cutAt?: number): Buffer[] {
  let size = 128;
  return messages.map((m) => {
    const b = message(m.payload, { type: m.type, cid: m.cid, streamId: m.streamId, timestamp: m.timestamp, chunkSize: cutAt ?? Math.max(1, size) });
    if (m.type === 1 && m.payload.length >= 4) size = m.payload.readUInt32BE(0) & 0x7fffffff;
    return b;
  });
}
