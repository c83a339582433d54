import { parse as parseQuery } from 'node:querystring';
import type { FlvPacket } from '../../sdk/index.ts';
import { loadNms, type NmsAmf, type NmsParserTag } from './nms-load.ts';
import { ChunkReader, OUT_CHUNK_SIZE, WireRefusal, writeMessage, MAX_COMMAND_MESSAGE, type InMessage, type UnfinishedBudget } from './wire-chunks.ts';
import { HANDSHAKE_SIZE, serverHandshake } from './wire-handshake.ts';

export { MAX_CHUNK_STREAMS, MAX_COMMAND_MESSAGE } from './wire-chunks.ts';

/*
 * The RTMP wire layer of one connection: handshake (wire-handshake.ts), chunk stream with its
 * bounds (wire-chunks.ts) and the commands a publisher or player sends (connect, createStream,
 * publish, play), answered as node-media-server 4.4.3 answered them. From that package only its
 * AMF0 codec and FLV tag classifier are used, as plain functions (nms-load.ts): sessions, stream
 * registry, listeners and checks are ours too (session.ts, the core stream table, server.ts).
 *
 * This file is also the fault boundary (README "Fault boundary"): every byte a client sends is
 * parsed inside `guarded`, so whatever the parser throws on hostile bytes (and whatever our
 * callbacks throw) becomes a string that ends one connection. Bounds that a try/catch cannot give
 * (memory, a parser that stops making progress) are checked before anything is allocated: message
 * sizes, chunk stream counts and unfinished bytes, the chunk size before it is used.
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

/** The largest body the chunk encoding carries in one chunk (the output chunk size). */
const ONE_CHUNK = OUT_CHUNK_SIZE;

/**
 * One media or data message of a publisher, as the stream table carries it: `body` the FLV tag
 * body, a view of the message's own buffer (the parser gets a fresh buffer for the next media
 * message; no copy; data messages are copied); `wire` its RTMP chunk encoding, made on the first
 * RTMP reader (`wireOf`) and shared by every other.
 */
export type MediaPacket = FlvPacket;

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
  /** The connection closed: what it held of unfinished messages goes back to the shared budget. */
  close(): void;
  /** Sends an `onStatus` on the connection's stream, e.g. `NetStream.Play.Stop`; a string on failure. */
  status(level: 'status' | 'error', code: string, description: string): string | null;
  /**
   * The publish or play was admitted: its success statuses (`NetStream.Publish.Start`; a player's
   * stream begin, `NetStream.Play.Reset`, `NetStream.Play.Start` and sample access), sent only now
   * so a refused client hears no success; a string on failure.
   */
  accepted(mode: 'publish' | 'play'): string | null;
}

/** Per-connection bounds on what the client may make the parser hold. */
export interface WireLimits {
  /** Largest audio or video message, in bytes (`rtmp.max_message_size_kbytes`). */
  maxMediaMessage: number;
  /** The bytes of unfinished messages of every connection together (shared, counted as they arrive). */
  unfinished?: UnfinishedBudget;
}

/** The adapter's entry points (one object, loaded only when RTMP is on). */
export interface RtmpWireLayer {
  createWire(events: WireEvents, limits: WireLimits): RtmpWire;
  /** Decodes an `onMetaData` body (`@setDataFrame` or plain) into its fields, if it is one. */
  decodeMetadata(body: Buffer): Record<string, unknown> | undefined;
  /** The RTMP chunk encoding of a packet, cached in `packet.wire` (packets converted from another format have none yet). */
  wireOf(packet: FlvPacket): Buffer;
}

const KINDS: Record<number, FlvPacket['kind']> = { 0: 'audio-header', 1: 'frame', 2: 'video-header', 3: 'keyframe', 4: 'frame', 5: 'metadata', 6: 'frame' };

/** The chunk stream a media or data message is sent on (as node-media-server's `createMessage`). */
const CHANNEL: Record<number, number> = { 8: 4, 9: 5, 18: 6 };

function describe(err: unknown): string {
  if (err instanceof WireRefusal) return err.message;
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return `parser failed (${text.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, 160)})`;
}

function firstValues(q: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const [k, v] of Object.entries(q ?? {})) out[k] = String(Array.isArray(v) ? (v[0] ?? '') : v);
  return out;
}

/** The chunks of a media or data packet (its codec type picks the chunk stream), stream 0. */
function mediaMessage(p: { codec_type: number; size: number; data: Buffer; dts: number }): Buffer {
  return writeMessage({ cid: CHANNEL[p.codec_type] ?? 0, type: p.codec_type, streamId: 0, timestamp: p.dts, body: p.data, size: p.size });
}

/** A protocol control message of the server (chunk stream 2): its fixed bytes with the value at 12. */
function control(hex: string, value: number): Buffer {
  const b = Buffer.from(hex, 'hex');
  b.writeUInt32BE(value, 12);
  return b;
}

/** What the server sends on `connect` before its answer: window size, peer bandwidth (dynamic), chunk size. */
const CONNECT_CONTROL = [
  control('02000000000004050000000000000000', 5_000_000),
  control('0200000000000506000000000000000002', 5_000_000),
  control('02000000000004010000000000000000', OUT_CHUNK_SIZE),
];

/** One connection's protocol state: handshake, then chunks, then the commands they carry. */
class Connection {
  #phase: 'c0' | 'c1' | 'c2' | 'chunks' = 'c0';
  #hs = Buffer.alloc(HANDSHAKE_SIZE);
  #hsBytes = 0;
  readonly #reader: ChunkReader;
  #app: unknown;
  #host = '';
  #objectEncoding: unknown = 0;
  #streams = 0;
  /** The message stream of `publish`/`play`; until then a status goes to stream 1. */
  #streamId: number | undefined;
  /** The stream name of the last publish or play (for its status text). */
  #name = '';
  readonly events: WireEvents;
  readonly amf: NmsAmf;
  readonly parserTag: NmsParserTag;

  constructor(events: WireEvents, limits: WireLimits, amf: NmsAmf, parserTag: NmsParserTag) {
    this.events = events;
    this.amf = amf;
    this.parserTag = parserTag;
    this.#reader = new ChunkReader(limits.maxMediaMessage, (m) => this.#message(m), limits.unfinished);
  }

  close(): void {
    this.#reader.release();
  }

  feed(data: Buffer): void {
    let i = 0;
    while (i < data.length && this.#phase !== 'chunks') {
      if (this.#phase === 'c0') { this.#phase = 'c1'; i++; continue; }
      const n = Math.min(HANDSHAKE_SIZE - this.#hsBytes, data.length - i);
      data.copy(this.#hs, this.#hsBytes, i, i + n);
      this.#hsBytes += n;
      i += n;
      if (this.#hsBytes < HANDSHAKE_SIZE) return;
      this.#hsBytes = 0;
      if (this.#phase === 'c1') { this.#phase = 'c2'; this.events.output(serverHandshake(this.#hs)); } else this.#phase = 'chunks';
    }
    if (i < data.length) this.#reader.feed(i === 0 ? data : data.subarray(i));
  }

  #message(m: InMessage): void {
    if (m.type === 17 || m.type === 20) return this.#invoke(m.type === 17 ? m.payload.subarray(1, m.length) : m.payload.subarray(0, m.length), m.streamId);
    if (m.type !== 8 && m.type !== 9 && m.type !== 15 && m.type !== 18) return;
    const p = this.parserTag(m.type, m.clock, m.length, m.payload);
    const kind = KINDS[p.flags];
    if (!kind) return;
    const type = p.codec_type === 8 || p.codec_type === 9 ? p.codec_type : 18;
    // the chunk encoding waits for the first RTMP reader (`wireOf`): a stream read only as LL-HLS, SRT or WebRTC never pays it
    this.events.packet({ kind, type, codec: p.codec_id, timestamp: p.dts, body: type === 18 ? Buffer.from(p.data.subarray(0, p.size)) : p.data.subarray(0, p.size), wire: undefined });
  }

  #invoke(body: Buffer, streamId: number): void {
    const cmd = this.amf.decodeAmf0Cmd(body) as { cmd?: unknown; transId?: unknown; cmdObj?: Record<string, unknown>; streamName?: string };
    if (cmd.cmd === 'connect') {
      const url = new URL(cmd.cmdObj!.tcUrl as string);
      this.#app = cmd.cmdObj!.app;
      this.#host = url.hostname;
      this.#objectEncoding = cmd.cmdObj!.objectEncoding != null ? cmd.cmdObj!.objectEncoding : 0;
      for (const b of CONNECT_CONTROL) this.events.output(Buffer.from(b));
      this.#send(0, { cmd: '_result', transId: cmd.transId, cmdObj: { fmsVer: 'FMS/3,0,1,123', capabilities: 31 }, info: { level: 'status', code: 'NetConnection.Connect.Success', description: 'Connection succeeded.', objectEncoding: this.#objectEncoding } });
    } else if (cmd.cmd === 'createStream') {
      this.#send(0, { cmd: '_result', transId: cmd.transId, cmdObj: null, info: ++this.#streams });
    } else if (cmd.cmd === 'publish' || cmd.cmd === 'play') {
      this.#start(cmd.cmd, cmd.streamName as string, streamId);
    }
  }

  #start(mode: 'publish' | 'play', streamName: string, streamId: number): void {
    const [name, query] = streamName.split('?');
    this.#streamId = streamId;
    this.#name = String(name);
    const req: WireRequest | undefined = typeof this.#app === 'string' ? { app: this.#app, name: String(name), query: firstValues(parseQuery(query ?? '')) } : undefined;
    // publish/play before connect (or a connect without app)
    if (!req) throw new WireRefusal('publish or play without the app of a connect');
    if (mode === 'publish') this.events.publish(req); else this.events.play(req);
  }

  accepted(mode: 'publish' | 'play'): void {
    if (mode === 'publish') {
      this.status('status', 'NetStream.Publish.Start', `/${String(this.#app)}/${this.#name} is now published.`);
      return;
    }
    const begin = Buffer.from('020000000000060400000000000000000000', 'hex');
    begin.writeUInt32BE(this.#streamId ?? 1, 14);
    this.events.output(begin);
    this.status('status', 'NetStream.Play.Reset', 'Playing and resetting stream.');
    this.status('status', 'NetStream.Play.Start', 'Started playing stream.');
    const access = this.amf.encodeAmf0Data({ cmd: '|RtmpSampleAccess', bool1: false, bool2: false });
    this.events.output(writeMessage({ cid: 6, type: 18, streamId: 0, timestamp: 0, body: access, size: access.length }));
  }

  #send(streamId: number, opt: Record<string, unknown>): void {
    const body = this.amf.encodeAmf0Cmd(opt);
    this.events.output(writeMessage({ cid: 3, type: 20, streamId, timestamp: 0, body, size: body.length }));
  }

  status(level: string, code: string, description: string): void {
    this.#send(this.#streamId ?? 1, { cmd: 'onStatus', transId: 0, cmdObj: null, info: { level, code, description } });
  }
}

/** Loads the wire layer (node-media-server's AMF0 codec and tag classifier with it). */
export function loadWireLayer(): RtmpWireLayer {
  const { amf, parserTag } = loadNms();
  return {
    createWire(events, limits) {
      const conn = new Connection(events, limits, amf, parserTag);
      let broken: string | null = null;
      const guarded = (fn: () => void): string | null => {
        if (broken) return broken;
        try {
          fn();
          return null;
        } catch (err) {
          broken = describe(err);
          return broken;
        }
      };
      return {
        feed: (data) => guarded(() => conn.feed(data)),
        close: () => conn.close(),
        status: (level, code, description) => guarded(() => conn.status(level, code, description)),
        accepted: (mode) => guarded(() => conn.accepted(mode)),
      };
    },
    wireOf,
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
 * The RTMP chunk encoding of a packet, made on its first RTMP reader and kept in `packet.wire`
 * for the others. Made with one chunk of up to 65535 bytes, so a body that fits is the wire's
 * tail, byte for byte: the packet's body becomes that view of the wire (the same bytes), so a
 * packet a GOP cache keeps costs its bytes once and the parser's buffer goes free.
 */
function wireOf(packet: FlvPacket): Buffer {
  if (packet.wire) return packet.wire;
  const body = packet.body;
  const wire = mediaMessage({ codec_type: packet.type, size: body.length, data: body, dts: packet.timestamp });
  packet.wire = wire;
  if (body.length <= ONE_CHUNK) (packet as { body: Buffer }).body = wire.subarray(wire.length - body.length);
  return wire;
}
