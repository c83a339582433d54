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

/** Runs `fn` with `console.log` silenced (synchronous code only: nothing else can run meanwhile). */
function quiet<T>(fn: () => T): T {
  const log = console.log;
  console.log = () => {};
  try {
    return fn();
  } finally {
    console.log = log;
  }
}

/**
 * Loads the two modules (only when RTMP is on). The AMF decoders run with `console.log` silenced:
 * the package's logger prints a plain-text line to stdout for each command or field it does not
 * know ("Unknown command", "Unknown field", "Do strict array!"), outside `log.level` and the
 * one-JSON-object-per-line log, one line per message a client sends (20,000 from one connection);
 * what a connection did wrong is logged once, by the session, when it closes. The package's logger
 * itself is left as it is (another user of the package in the process keeps it).
 */
export function loadNms(): { amf: NmsAmf; parserTag: NmsParserTag } {
  const require = createRequire(import.meta.url);
  const raw = require('node-media-server/src/protocol/amf.js') as NmsAmf;
  const amf: NmsAmf = {
    decodeAmf0Cmd: (b) => quiet(() => raw.decodeAmf0Cmd(b)),
    encodeAmf0Cmd: (opt) => raw.encodeAmf0Cmd(opt),
    decodeAmf0Data: (b) => quiet(() => raw.decodeAmf0Data(b)),
    encodeAmf0Data: (opt) => raw.encodeAmf0Data(opt),
  };
  const Flv = require('node-media-server/src/protocol/flv.js') as { parserTag: NmsParserTag };
  return { amf, parserTag: (type, time, size, data) => Flv.parserTag(type, time, size, data) };
}
