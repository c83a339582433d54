import { createRequire } from 'node:module';

/*
 * The only file that touches node-media-server (pinned 4.4.3, CommonJS, no types). It uses the
 * RTMP wire layer alone (handshake, chunk stream, AMF commands, FLV tag parsing): sessions,
 * stream registry, listeners and checks are ours (session.ts, hub.ts, server.ts), because the
 * package's server classes keep module-level state, exit the process on a busy port and broadcast
 * a refused publisher's media (research rtmp-srt.md 2.6). Replacing the package with an own wire
 * implementation means rewriting this file only.
 */

/** What a client asked for in `publish` or `play`. */
export interface WireRequest {
  /** The `app` of `connect`, e.g. `live` or `live/sub` (ffmpeg puts nested folders here). */
  app: string;
  /** The stream name of `publish`/`play` without its query, e.g. `abc.stream`. */
  name: string;
  /** The query of the stream name (`?token=..`), one value per key. */
  query: Record<string, string>;
}

/** One media or data message of a publisher, already copied out of the parser's buffer. */
export interface MediaPacket {
  /** `audio-header`, `video-header` and `metadata` replace the stream's stored ones. */
  kind: 'audio-header' | 'video-header' | 'metadata' | 'keyframe' | 'frame';
  /** FLV codec id (7 h264, 10 aac, 2 mp3) or an Enhanced RTMP FourCC as a number. */
  codec: number;
  /** The message as RTMP chunks, ready to write to any player. */
  wire: Buffer;
  /** The payload (FLV tag body); only kept for `metadata`. */
  body?: Buffer;
}

export interface WireEvents {
  /** Bytes for the client. */
  output(data: Buffer): void;
  publish(req: WireRequest): void;
  play(req: WireRequest): void;
  packet(packet: MediaPacket): void;
}

/** One connection's protocol state. */
export interface RtmpWire {
  /** Parses bytes from the client; a string is a protocol error (close the connection). */
  feed(data: Buffer): string | null;
  /** Sends an `onStatus` on the connection's stream, e.g. `NetStream.Play.Stop`. */
  status(level: 'status' | 'error', code: string, description: string): void;
}

/** The adapter's entry points (one object, loaded only when RTMP is on). */
export interface RtmpWireLayer {
  createWire(events: WireEvents): RtmpWire;
  /** Decodes an `onMetaData` body (`@setDataFrame` or plain) into its fields, if it is one. */
  decodeMetadata(body: Buffer): Record<string, unknown> | undefined;
}

interface NmsPacket { codec_type: number; codec_id: number; flags: number; size: number; data: Buffer }
interface NmsRtmp {
  onConnectCallback(req: { app: string; name: string; query: Record<string, string | string[]> }): void;
  onPlayCallback(): void;
  onPushCallback(): void;
  onPacketCallback(p: NmsPacket): void;
  onOutputCallback(b: Buffer): void;
  parserData(b: Buffer): string | null;
  sendStatusMessage(sid: number, level: string, code: string, description: string): void;
  streamId: number;
}
interface NmsRtmpClass { new (): NmsRtmp; createMessage(p: NmsPacket): Buffer }

const KINDS: Record<number, MediaPacket['kind']> = { 0: 'audio-header', 1: 'frame', 2: 'video-header', 3: 'keyframe', 4: 'frame', 5: 'metadata', 6: 'frame' };

function firstValues(q: Record<string, string | string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) out[k] = Array.isArray(v) ? (v[0] ?? '') : v;
  return out;
}

/** Loads the package's RTMP layer (deep paths: the package has no exports map). */
export function loadWireLayer(): RtmpWireLayer {
  const require = createRequire(import.meta.url);
  const Rtmp = require('node-media-server/src/protocol/rtmp.js') as NmsRtmpClass;
  const amf = require('node-media-server/src/protocol/amf.js') as { decodeAmf0Data(b: Buffer): { cmd?: string; dataObj?: Record<string, unknown> | null } };
  // its logger writes to stdout; every event it would log is logged by the plugin instead
  const logger = require('node-media-server/src/core/logger.js') as { log(...a: unknown[]): void };
  logger.log = () => {};

  return {
    createWire(events) {
      const rtmp = new Rtmp();
      let req: WireRequest | undefined;
      rtmp.onOutputCallback = (b) => events.output(b);
      rtmp.onConnectCallback = (r) => { req = { app: String(r.app ?? ''), name: String(r.name ?? ''), query: firstValues(r.query ?? {}) }; };
      rtmp.onPushCallback = () => events.publish(req!);
      rtmp.onPlayCallback = () => events.play(req!);
      rtmp.onPacketCallback = (p) => {
        const kind = KINDS[p.flags];
        if (!kind) return;
        // the parser reuses its payload buffer: encode (which copies) before the next message
        const wire = Rtmp.createMessage(p);
        events.packet({ kind, codec: p.codec_id, wire, body: kind === 'metadata' ? Buffer.from(p.data.subarray(0, p.size)) : undefined });
      };
      return {
        feed: (data) => rtmp.parserData(data),
        status: (level, code, description) => rtmp.sendStatusMessage(rtmp.streamId ?? 1, level, code, description),
      };
    },
    decodeMetadata(body) {
      try {
        const m = amf.decodeAmf0Data(body);
        return (m.cmd === '@setDataFrame' || m.cmd === 'onMetaData') && m.dataObj ? m.dataObj : undefined;
      } catch {
        return undefined;
      }
    },
  };
}
