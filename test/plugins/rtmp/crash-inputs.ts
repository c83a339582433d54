import { amf0, command, connectCommand, invoke, message } from './wire-kit.ts';

/*
 * Inputs that made node-media-server's parser throw and, before the fault boundary of
 * nms-adapter.ts, took the whole service down (issue 27): the examples first, then the
 * ones found while reading the parser. Each is what the client sends after the handshake.
 */

export interface CrashInput {
  name: string;
  bytes(port: number): Buffer;
  /** False for input the plugin now takes as odd but valid (the connection stays open). */
  ends?: false;
}

const connected = (port: number, ...rest: Buffer[]) => Buffer.concat([connectCommand(port, 'live'), invoke(command('createStream', 2, amf0.null())), ...rest]);

// the parser handles a message only when the next byte arrives: an empty one needs a follower
const thenMore = (b: Buffer) => Buffer.concat([b, invoke(command('_checkbw', 9, amf0.null()))]);

function nested(depth: number): Buffer {
  // each level is an object whose one key holds the next level
  const head = Buffer.concat([Buffer.from([0x03]), amf0.utf('a')]);
  return Buffer.concat([...Array.from({ length: depth }, () => head), amf0.null()]);
}

export const CRASH_INPUTS: CrashInput[] = [
  { name: 'connect with an AMF null command object', bytes: () => invoke(command('connect', 1, amf0.null())) },
  { name: 'connect without tcUrl', bytes: () => invoke(command('connect', 1, amf0.of({ app: 'live', flashVer: 'FMLE/3.0' }))) },
  { name: 'connect with a tcUrl that is no URL', bytes: () => invoke(command('connect', 1, amf0.of({ app: 'live', tcUrl: 'not a url' }))) },
  { name: 'publish without stream name', bytes: (port) => connected(port, invoke(command('publish', 3, amf0.null()), 1)) },
  { name: 'play without stream name', bytes: (port) => connected(port, invoke(command('play', 3, amf0.null()), 1)) },
  { name: 'publish with a number as stream name', bytes: (port) => connected(port, invoke(command('publish', 3, amf0.null(), amf0.num(7)), 1)) },
  { name: 'deeply nested AMF', bytes: () => invoke(command('connect', 1, nested(20_000))) },
  {
    name: 'truncated AMF string',
    bytes: () => {
      const s = amf0.str('connect');
      s.writeUInt16BE(60_000, 1);
      return invoke(s);
    },
  },
  { name: 'a command named after an Object.prototype member', bytes: () => invoke(command('constructor', 1, amf0.null())) },
  { name: 'Set Chunk Size with an empty payload', bytes: () => thenMore(message(Buffer.alloc(0), { type: 1, cid: 2 })) },
  { name: 'Window Acknowledgement Size with an empty payload', bytes: () => thenMore(message(Buffer.alloc(0), { type: 5, cid: 2 })) },
  { name: 'video message with an empty payload', bytes: () => thenMore(message(Buffer.alloc(0), { type: 9, cid: 5, streamId: 1 })), ends: false },
  { name: 'strict array with a count beyond its data', bytes: () => invoke(command('connect', 1, amf0.strict([amf0.null()], 0xffffffff))) },
  { name: 'Flex (AMF3) command with an empty body', bytes: () => thenMore(message(Buffer.alloc(0), { type: 17 })) },
];
