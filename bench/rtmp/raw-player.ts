import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

/*
 * A light RTMP player for the benchmark: handshake, connect, createStream, play, then it only
 * counts bytes (no demuxing), so hundreds fit in one process where hundreds of ffmpegs would not.
 */

function amfString(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const h = Buffer.alloc(3);
  h[0] = 0x02;
  h.writeUInt16BE(b.length, 1);
  return Buffer.concat([h, b]);
}

function amfNumber(n: number): Buffer {
  const b = Buffer.alloc(9);
  b[0] = 0x00;
  b.writeDoubleBE(n, 1);
  return b;
}

function amfObject(o: Record<string, string | number>): Buffer {
  const parts: Buffer[] = [Buffer.from([0x03])];
  for (const [k, v] of Object.entries(o)) {
    const key = Buffer.from(k, 'utf8');
    const len = Buffer.alloc(2);
    len.writeUInt16BE(key.length);
    parts.push(len, key, typeof v === 'number' ? amfNumber(v) : amfString(v));
  }
  parts.push(Buffer.from([0x00, 0x00, 0x09]));
  return Buffer.concat(parts);
}

/** One AMF0 command message on chunk stream 3, split into 128-byte chunks. */
function command(streamId: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(12);
  h[0] = 0x03;
  h.writeUIntBE(0, 1, 3);
  h.writeUIntBE(payload.length, 4, 3);
  h[7] = 0x14;
  h.writeUInt32LE(streamId, 8);
  const parts: Buffer[] = [h];
  for (let i = 0; i < payload.length; i += 128) {
    if (i > 0) parts.push(Buffer.from([0xc3]));
    parts.push(payload.subarray(i, i + 128));
  }
  return Buffer.concat(parts);
}

export class RawPlayer {
  /** Bytes received after the handshake. */
  bytes = 0;
  closed = false;
  readonly #socket: Socket;

  constructor(port: number, app: string, name: string) {
    const s = connect(port, '127.0.0.1');
    this.#socket = s;
    const c1 = Buffer.concat([Buffer.alloc(8), randomBytes(1528)]);
    s.on('connect', () => s.write(Buffer.concat([Buffer.from([0x03]), c1])));
    let hs = Buffer.alloc(0);
    let done = false;
    s.on('data', (d: Buffer) => {
      if (done) { this.bytes += d.length; return; }
      hs = Buffer.concat([hs, d]);
      if (hs.length < 3073) return;
      done = true;
      this.bytes += hs.length - 3073;
      const s1 = hs.subarray(1, 1537);
      const tcUrl = `rtmp://127.0.0.1:${port}/${app}`;
      s.write(Buffer.concat([
        s1,
        command(0, Buffer.concat([amfString('connect'), amfNumber(1), amfObject({ app, tcUrl, flashVer: 'LNX 9,0,124,2', fpad: 0, capabilities: 15, audioCodecs: 4071, videoCodecs: 252, videoFunction: 1 })])),
        command(0, Buffer.concat([amfString('createStream'), amfNumber(2), Buffer.from([0x05])])),
        command(1, Buffer.concat([amfString('play'), amfNumber(0), Buffer.from([0x05]), amfString(name)])),
      ]));
    });
    s.on('error', () => {});
    s.on('close', () => { this.closed = true; });
  }

  /** Stops reading (the server's output backs up, as with a slow or stalled player). */
  pause(): void {
    this.#socket.pause();
  }

  resume(): void {
    this.#socket.resume();
  }

  close(): void {
    this.#socket.destroy();
  }
}
