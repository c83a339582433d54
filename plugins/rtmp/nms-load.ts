import { createRequire } from 'node:module';

/*
 * Loading node-media-server's RTMP wire layer (pinned 4.4.3, CommonJS, no types, no exports
 * map: deep paths). Only nms-adapter.ts uses what this returns.
 */

/** The parser's view of one chunk stream (its `RtmpPacket`). */
export interface NmsChunkStream {
  header: { fmt: number; cid: number; timestamp: number; length: number; type: number; stream_id: number };
  clock: number;
  payload: Buffer;
  capacity: number;
  bytes: number;
}

export interface NmsPacket { codec_type: number; codec_id: number; flags: number; size: number; data: Buffer; dts: number }

/** The members of the package's `Rtmp` class the adapter uses or wraps. */
export interface NmsRtmp {
  onConnectCallback(req: { app: unknown; name: string; query: Record<string, string | string[]> }): void;
  onPlayCallback(): void;
  onPushCallback(): void;
  onPacketCallback(p: NmsPacket): void;
  onOutputCallback(b: Buffer): void;
  parserData(b: Buffer): string | null;
  sendStatusMessage(sid: number, level: string, code: string, description: string): void;
  /** Called once a chunk header is read; allocates the message buffer of its chunk stream. */
  packetAlloc(): void;
  /** Called for each complete message. */
  packetHandler(): void;
  parserPacket: NmsChunkStream;
  inPackets: Map<number, NmsChunkStream>;
  inChunkSize: number;
  streamId: number;
}

export interface NmsRtmpClass { new (): NmsRtmp; createMessage(p: NmsPacket): Buffer }
export interface NmsAmf { decodeAmf0Data(b: Buffer): { cmd?: unknown; dataObj?: unknown } }

/**
 * The package's `Rtmp` class and AMF decoder. rtmp.js builds an FLV file parser per connection
 * (`this.flv = new Flv()`, a 1 MiB buffer) that the RTMP path never uses: measured in the
 * service, 600 idle connections held 80 MB of RSS for those buffers. So rtmp.js is evaluated
 * here with `./flv.js` resolving to a class that has only the static tag parser it does use;
 * the real flv.js stays in the cache for anyone else, and the patched rtmp.js is not left there.
 */
export function loadNms(): { Rtmp: NmsRtmpClass; amf: NmsAmf } {
  const require = createRequire(import.meta.url);
  const flvPath = require.resolve('node-media-server/src/protocol/flv.js');
  const rtmpPath = require.resolve('node-media-server/src/protocol/rtmp.js');
  const Flv = require(flvPath) as { parserTag: unknown };
  const flvModule = require.cache[flvPath]!;
  class TagParserOnly {
    static parserTag = Flv.parserTag;
  }
  const cachedRtmp = require.cache[rtmpPath];
  delete require.cache[rtmpPath];
  flvModule.exports = TagParserOnly;
  let Rtmp: NmsRtmpClass;
  try {
    Rtmp = require(rtmpPath) as NmsRtmpClass;
  } finally {
    flvModule.exports = Flv;
    if (cachedRtmp) require.cache[rtmpPath] = cachedRtmp;
    else delete require.cache[rtmpPath];
  }
  const amf = require('node-media-server/src/protocol/amf.js') as NmsAmf;
  // its logger writes to stdout; every event it would log is logged by the plugin instead
  const logger = require('node-media-server/src/core/logger.js') as { log(...a: unknown[]): void };
  logger.log = () => {};
  return { Rtmp, amf };
}
