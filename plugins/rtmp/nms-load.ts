import { createRequire } from 'node:module';

/*
 * What this plugin takes from node-media-server (pinned 4.4.3, CommonJS, no types, no exports map:
 * deep paths): two modules of plain functions, called as they are and never changed. The AMF0
 * codec (`amf.js`) and the FLV tag classifier (`Flv.parserTag`, a static function of `flv.js`).
 * The handshake, the chunk stream and the commands are ours (wire-*.ts, nms-adapter.ts), so no
 * member of the package is replaced and none of its connection classes is built.
 */

/** A media or data message as `Flv.parserTag` classifies it. */
export interface NmsPacket { codec_type: number; codec_id: number; flags: number; size: number; data: Buffer; dts: number }

/** The AMF0 codec of the package. */
export interface NmsAmf {
  decodeAmf0Cmd(b: Buffer): Record<string, unknown> & { cmd?: unknown };
  encodeAmf0Cmd(opt: Record<string, unknown>): Buffer;
  decodeAmf0Data(b: Buffer): { cmd?: unknown; dataObj?: unknown };
  encodeAmf0Data(opt: Record<string, unknown>): Buffer;
}

/** The package's FLV tag classifier: codec id, flags (0 audio header, 1 audio, 2 video header, 3 keyframe, 4 frame, 5 metadata, 6 video metadata). */
export type NmsParserTag = (type: number, time: number, size: number, data: Buffer) => NmsPacket;

/** Loads the two modules (only when RTMP is on). */
export function loadNms(): { amf: NmsAmf; parserTag: NmsParserTag } {
  const require = createRequire(import.meta.url);
  const amf = require('node-media-server/src/protocol/amf.js') as NmsAmf;
  const Flv = require('node-media-server/src/protocol/flv.js') as { parserTag: NmsParserTag };
  return { amf, parserTag: (type, time, size, data) => Flv.parserTag(type, time, size, data) };
}
