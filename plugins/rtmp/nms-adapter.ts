import type { FlvPacket } from '../../sdk/index.ts';
import { loadNms, type NmsRtmp, type NmsRtmpClass } from './nms-load.ts';

/*
 * The only file that drives node-media-server (loaded by nms-load.ts). It uses the RTMP wire
 * layer alone (handshake, chunk stream, AMF commands, FLV tag parsing): sessions, stream
 * registry, listeners and checks are ours (session.ts, the core stream table, server.ts), because the package's
 * server classes keep module-level state, exit the process on a busy port and broadcast a
 * refused publisher's media (research rtmp-srt.md 2.6). Replacing the package with an own wire
 * implementation means rewriting this file only.
 *
 * This file is also the fault boundary (README "Fault boundary"): every call into the package
 * runs inside `#guarded`, so whatever it throws on hostile bytes (and whatever our callbacks,
 * which it calls synchronously, throw) becomes a string that ends one connection. Bounds that a
 * try/catch cannot give (memory, a parser that stops making progress) are checked before the
 * package acts: message sizes and chunk stream counts before it allocates, the chunk size
 * before it is used.
 */

/** What a client asked for in `publish` or `play`. */
export interface WireRequest {
  /** The `app` of `connect` as sent, e.g. `live`, `live/sub`, or `abc.stream?token=T` for a one-element URL. */
  app: string;
  /** The stream name of `publish`/`play` without its query, e.g. `abc.stream` (empty for a one-element URL). */
  name: string;
  /** The query of the stream name (`?token=..`), one value per key. */
  query: Record<string, string>;
}

/**
 * One media or data message of a publisher, as the stream table carries it: `wire` is its RTMP
 * chunk encoding (made once, shared by every RTMP reader), `body` the FLV tag body, a reference to
 * the message's own buffer (the parser gets a fresh buffer for the next media message; no copy).
 */
/** The largest body the chunk encoding carries in one chunk (node-media-server's output chunk size). */
const ONE_CHUNK = 0xffff;

export type MediaPacket = FlvPacket & { wire: Buffer };

export interface WireEvents {
  /** Bytes for the client. */
  output(data: Buffer): void;
  publish(req: WireRequest): void;
  play(req: WireRequest): void;
  packet(packet: MediaPacket): void;
}

/** One connection's protocol state. */
export interface RtmpWire {
  /** Parses bytes from the client; a string is why the connection must close. */
  feed(data: Buffer): string | null;
  /** Sends an `onStatus` on the connection's stream, e.g. `NetStream.Play.Stop`; a string on failure. */
  status(level: 'status' | 'error', code: string, description: string): string | null;
}

/** Per-connection bounds on what the client may make the parser hold. */
export interface WireLimits {
  /** Largest audio or video message, in bytes (`rtmp.max_message_size_kbytes`). */
  maxMediaMessage: number;
}

/** The adapter's entry points (one object, loaded only when RTMP is on). */
export interface RtmpWireLayer {
  createWire(events: WireEvents, limits: WireLimits): RtmpWire;
  /** Decodes an `onMetaData` body (`@setDataFrame` or plain) into its fields, if it is one. */
  decodeMetadata(body: Buffer): Record<string, unknown> | undefined;
  /** The RTMP chunk encoding of a packet, cached in `packet.wire` (packets converted from another format have none yet). */
  wireOf(packet: FlvPacket): Buffer;
}

/** Commands and data messages are a few hundred bytes in every known client (connect, publish, onMetaData). */
export const MAX_COMMAND_MESSAGE = 64 * 1024;
/** Clients use chunk streams 2 to 8; the protocol allows 65,599, each with its own buffer. */
export const MAX_CHUNK_STREAMS = 64;

const KINDS: Record<number, FlvPacket['kind']> = { 0: 'audio-header', 1: 'frame', 2: 'video-header', 3: 'keyframe', 4: 'frame', 5: 'metadata', 6: 'frame' };

const EMPTY = Buffer.alloc(0);

/** A bound of ours, as opposed to whatever the package throws. */
class WireRefusal extends Error {}

function describe(err: unknown): string {
  if (err instanceof WireRefusal) return err.message;
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return `parser failed (${text.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 160)})`;
}

function firstValues(q: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(q ?? {})) out[k] = String(Array.isArray(v) ? (v[0] ?? '') : v);
  return out;
}

/**
 * Replaces the package's buffer allocation and wraps its message dispatch, on this one instance.
 * `allocUnsafe`: the parser writes every byte before reading it, and the pages of a large
 * message are then committed as its bytes arrive, not when a header announces 16 MiB.
 */
function bound(rtmp: NmsRtmp, limits: WireLimits): void {
  rtmp.packetAlloc = () => {
    const p = rtmp.parserPacket;
    const { length, type } = p.header;
    const max = type === 8 || type === 9 ? limits.maxMediaMessage : MAX_COMMAND_MESSAGE;
    if (length > max) throw new WireRefusal(`message of type ${type} with ${length} bytes (at most ${max})`);
    if (rtmp.inPackets.size > MAX_CHUNK_STREAMS) throw new WireRefusal(`more than ${MAX_CHUNK_STREAMS} chunk streams`);
    if (type === 8 || type === 9) {
      // a media message gets a buffer of its own, kept by the stream as the packet's body
      p.payload = Buffer.allocUnsafe(length + 16).fill(0, length);
      p.capacity = length;
      return;
    }
    if (p.payload.length >= length + 16) return;
    let held = 0;
    for (const other of rtmp.inPackets.values()) if (other !== p) held += other.capacity;
    if (held + length > 2 * limits.maxMediaMessage) throw new WireRefusal(`more than ${2 * limits.maxMediaMessage} bytes of unfinished messages`);
    // as the package: 1 KiB of room, so frames a little larger than the last do not reallocate;
    // zeroed past the end, because the tag parser peeks at fixed offsets of short messages
    p.payload = Buffer.allocUnsafe(length + 1024).fill(0, length);
    p.capacity = length + 1024 - 16;
  };
  const handle = rtmp.packetHandler.bind(rtmp);
  rtmp.packetHandler = () => {
    const { type, length } = rtmp.parserPacket.header;
    // protocol control messages carry a 4-byte value (Set Peer Bandwidth 5)
    if (type >= 1 && type <= 6 && type !== 4 && length < 4) throw new WireRefusal(`protocol control message ${type} with ${length} bytes`);
    handle();
    // a large buffer is not kept for the next message of its chunk stream (everything the
    // callbacks keep is copied): what a connection holds between messages stays small
    const done = rtmp.parserPacket;
    // a media message's buffer is now its packet's body: never reused
    if (done.capacity > MAX_COMMAND_MESSAGE || type === 8 || type === 9) {
      done.payload = EMPTY;
      done.capacity = 0;
    }
    const size = rtmp.inChunkSize;
    // 0 stalls the parser for good (its chunk arithmetic turns into NaN); the top bit is reserved
    if (!(size >= 1 && size <= 0x7fffffff)) throw new WireRefusal(`Set Chunk Size ${size}`);
  };
}

/** The RTMP chunks of a packet that came from another format (a converter). */
function encode(Rtmp: NmsRtmpClass, p: FlvPacket): Buffer {
  return Rtmp.createMessage({ codec_type: p.type, codec_id: p.codec, flags: 0, size: p.body.length, data: p.body, dts: p.timestamp });
}

/** Loads the package's RTMP layer. */
export function loadWireLayer(): RtmpWireLayer {
  const { Rtmp, amf } = loadNms();

  return {
    createWire(events, limits) {
      const rtmp = new Rtmp();
      bound(rtmp, limits);
      let req: WireRequest | undefined;
      let broken: string | null = null;
      const guarded = (fn: () => string | null | void): string | null => {
        if (broken) return broken;
        try {
          return fn() ?? null;
        } catch (err) {
          broken = describe(err);
          return broken;
        }
      };
      rtmp.onOutputCallback = (b) => events.output(b);
      rtmp.onConnectCallback = (r) => {
        // publish/play before connect (or a connect without app): the package passes undefined
        if (typeof r.app !== 'string') throw new WireRefusal('publish or play without the app of a connect');
        req = { app: r.app, name: String(r.name), query: firstValues(r.query) };
      };
      rtmp.onPushCallback = () => events.publish(req!);
      rtmp.onPlayCallback = () => events.play(req!);
      rtmp.onPacketCallback = (p) => {
        const kind = KINDS[p.flags];
        if (!kind) return;
        // media: the parser's buffer becomes the body (packetHandler above lets it go); data
        // messages share the parser's buffer, so their body is copied (a few hundred bytes)
        const type = p.codec_type === 8 || p.codec_type === 9 ? p.codec_type : 18;
        const wire = Rtmp.createMessage(p);
        events.packet({ kind, type, codec: p.codec_id, timestamp: p.dts, body: bodyOf(p.data, p.size, type, wire), wire });
      };
      return {
        feed: (data) => guarded(() => rtmp.parserData(data)),
        status: (level, code, description) => guarded(() => rtmp.sendStatusMessage(rtmp.streamId ?? 1, level, code, description)),
      };
    },
    wireOf: (packet) => (packet.wire ??= encode(Rtmp, packet)),
    decodeMetadata(body) {
      try {
        if (body.length > MAX_COMMAND_MESSAGE) return undefined;
        const m = amf.decodeAmf0Data(body);
        const fields = m.dataObj;
        return (m.cmd === '@setDataFrame' || m.cmd === 'onMetaData') && fields && typeof fields === 'object' ? fields as Record<string, unknown> : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * A packet's body as the stream table keeps it. The chunk encoding (`wire`) is made with one chunk
 * of up to 65535 bytes, so a body that fits is the wire's tail, byte for byte: the body is then a
 * view of the wire and the packet costs its bytes once (a GOP cache holds half as much), the
 * parser's buffer going free. A larger body (several chunks) keeps its own buffer; data messages
 * share the parser's buffer, so theirs is copied (a few hundred bytes).
 */
function bodyOf(data: Buffer, size: number, type: 8 | 9 | 18, wire: Buffer): Buffer {
  const tail = wire.subarray(wire.length - size);
  if (size <= ONE_CHUNK && tail.equals(data.subarray(0, size))) return tail;
  return type === 18 ? Buffer.from(data.subarray(0, size)) : data.subarray(0, size);
}
