import { connect, type Socket } from 'node:net';

/*
 * Raw RTMP for tests and bench/attacks: AMF0/AMF3 values, chunked messages (any chunk stream,
 * chunk size, timestamp) and a client socket that does the handshake and then writes whatever
 * it is given, well formed or not. Nothing here checks its input: it is meant to be hostile.
 */

const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16BE(n & 0xffff); return b; };
const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n >>> 0); return b; };

/** AMF0 encoders (type byte first); `utf` is a name or key without type byte. */
export const amf0 = {
  num(n: number): Buffer { const b = Buffer.alloc(9); b.writeDoubleBE(n, 1); return b; },
  bool(v: boolean): Buffer { return Buffer.from([0x01, v ? 1 : 0]); },
  str(s: string): Buffer { const d = Buffer.from(s, 'utf8'); return Buffer.concat([Buffer.from([0x02]), u16(d.length), d]); },
  longStr(s: string): Buffer { const d = Buffer.from(s, 'utf8'); return Buffer.concat([Buffer.from([0x0c]), u32(d.length), d]); },
  null(): Buffer { return Buffer.from([0x05]); },
  undef(): Buffer { return Buffer.from([0x06]); },
  utf(s: string): Buffer { const d = Buffer.from(s, 'utf8'); return Buffer.concat([u16(d.length), d]); },
  obj(fields: Array<[string, Buffer]>): Buffer {
    return Buffer.concat([Buffer.from([0x03]), ...fields.flatMap(([k, v]) => [amf0.utf(k), v]), Buffer.from([0, 0, 9])]);
  },
  ecma(fields: Array<[string, Buffer]>): Buffer {
    return Buffer.concat([Buffer.from([0x08]), u32(fields.length), ...fields.flatMap(([k, v]) => [amf0.utf(k), v]), Buffer.from([0, 0, 9])]);
  },
  strict(items: Buffer[], count = items.length): Buffer { return Buffer.concat([Buffer.from([0x0a]), u32(count), ...items]); },
  /** A plain JS value (string, number, boolean, null, nested object) as AMF0. */
  of(v: unknown): Buffer {
    if (v === null) return amf0.null();
    if (v === undefined) return amf0.undef();
    if (typeof v === 'number') return amf0.num(v);
    if (typeof v === 'boolean') return amf0.bool(v);
    if (typeof v === 'string') return amf0.str(v);
    return amf0.obj(Object.entries(v as object).map(([k, x]) => [k, amf0.of(x)]));
  },
};

/** AMF3 encoders, as carried in a type-17 (Flex) command after its 0x00 format byte. */
export const amf3 = {
  /** U29: the variable-length integer of AMF3. */
  u29(n: number): Buffer {
    n &= 0x1fffffff;
    if (n < 0x80) return Buffer.from([n]);
    if (n < 0x4000) return Buffer.from([(n >> 7) | 0x80, n & 0x7f]);
    if (n < 0x200000) return Buffer.from([(n >> 14) | 0x80, ((n >> 7) & 0x7f) | 0x80, n & 0x7f]);
    return Buffer.from([(n >> 22) | 0x80, ((n >> 15) & 0x7f) | 0x80, ((n >> 8) & 0x7f) | 0x80, n & 0xff]);
  },
  str(s: string): Buffer { const d = Buffer.from(s, 'utf8'); return Buffer.concat([Buffer.from([0x06]), amf3.u29((d.length << 1) | 1), d]); },
  int(n: number): Buffer { return Buffer.concat([Buffer.from([0x04]), amf3.u29(n)]); },
  /** An AMF0 value that switches to AMF3 (0x11, "avmplus object"). */
  switch(v: Buffer): Buffer { return Buffer.concat([Buffer.from([0x11]), v]); },
};

/** A command (`connect`, `publish`, ...): name, transaction id and arguments, AMF0. */
export function command(name: string, tid: number, ...args: Buffer[]): Buffer {
  return Buffer.concat([amf0.str(name), amf0.num(tid), ...args]);
}

export interface MessageOptions {
  /** RTMP message type: 1 set chunk size, 8 audio, 9 video, 17 AMF3 command, 18 data, 20 command. */
  type: number;
  /** Chunk stream id (2..65599); default 3. */
  cid?: number;
  streamId?: number;
  /** Extended (4-byte) timestamp from 0xffffff up. */
  timestamp?: number;
  /** Chunk size the receiver expects (default 128, the protocol's initial one). */
  chunkSize?: number;
  /** The length field, when it should lie about the payload. */
  length?: number;
}

function basicHeader(fmt: number, cid: number): Buffer {
  if (cid < 64) return Buffer.from([(fmt << 6) | cid]);
  if (cid < 320) return Buffer.from([fmt << 6, cid - 64]);
  return Buffer.from([(fmt << 6) | 1, (cid - 64) & 0xff, ((cid - 64) >> 8) & 0xff]);
}

/** One message as chunks: a type-0 header, then type-3 continuations every `chunkSize` bytes. */
export function message(payload: Buffer, o: MessageOptions): Buffer {
  const cid = o.cid ?? 3;
  const chunkSize = o.chunkSize ?? 128;
  const ts = o.timestamp ?? 0;
  const ext = ts >= 0xffffff;
  const h = Buffer.alloc(11);
  h.writeUIntBE(ext ? 0xffffff : ts, 0, 3);
  h.writeUIntBE((o.length ?? payload.length) & 0xffffff, 3, 3);
  h[6] = o.type & 0xff;
  h.writeUInt32LE((o.streamId ?? 0) >>> 0, 7);
  const parts: Buffer[] = [basicHeader(0, cid), h];
  if (ext) parts.push(u32(ts));
  for (let i = 0; i < payload.length || i === 0; i += chunkSize) {
    if (i > 0) parts.push(basicHeader(3, cid), ...(ext ? [u32(ts)] : []));
    parts.push(payload.subarray(i, i + chunkSize));
    if (payload.length === 0) break;
  }
  return Buffer.concat(parts);
}

/** An AMF0 command message on chunk stream 3. */
export function invoke(payload: Buffer, streamId = 0, chunkSize = 128): Buffer {
  return message(payload, { type: 20, streamId, chunkSize });
}

/** Set Chunk Size (protocol control, chunk stream 2). */
export function setChunkSize(size: number): Buffer {
  return message(u32(size), { type: 1, cid: 2 });
}

/** `connect` with an ordinary command object for `app` (as ffmpeg sends it). */
export function connectCommand(port: number, app: string): Buffer {
  return invoke(command('connect', 1, amf0.of({ app, type: 'nonprivate', flashVer: 'FMLE/3.0', tcUrl: `rtmp://127.0.0.1:${port}/${app}` })));
}

/** connect, createStream, then `publish` or `play` of `name` (stream id 1). */
export function session(port: number, app: string, name: string, mode: 'publish' | 'play'): Buffer {
  return Buffer.concat([
    connectCommand(port, app),
    invoke(command('createStream', 2, amf0.null())),
    invoke(command(mode, 3, amf0.null(), amf0.str(name), ...(mode === 'publish' ? [amf0.str('live')] : [])), 1),
  ]);
}

/** A client socket that does the plain handshake (C0 C1, waits for S0 S1 S2, C2) when asked. */
export class RawRtmp {
  readonly socket: Socket;
  /** Bytes received after S0 S1 S2. */
  received = 0;
  /** Resolves when the server closed the connection (or it broke). */
  readonly closed: Promise<void>;
  #buf = Buffer.alloc(0);
  /** The last bytes received after the handshake, as latin1, to look for status codes. */
  #tail = '';
  #handshaken = false;
  #waiters: Array<() => void> = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('error', () => {});
    this.closed = new Promise((r) => socket.once('close', () => r()));
    socket.on('data', (d: Buffer) => {
      if (this.#handshaken) {
        this.received += d.length;
        this.#tail = (this.#tail + d.toString('latin1')).slice(-65_536);
      } else this.#buf = Buffer.concat([this.#buf, d]);
      for (const w of this.#waiters.splice(0)) w();
    });
    socket.once('close', () => { for (const w of this.#waiters.splice(0)) w(); });
  }

  /** Connects to 127.0.0.1:`port`; rejects if the connection is refused. */
  static open(port: number, host = '127.0.0.1', localAddress?: string): Promise<RawRtmp> {
    return new Promise((resolve, reject) => {
      const s = connect({ port, host, localAddress });
      s.once('connect', () => { s.off('error', reject); resolve(new RawRtmp(s)); });
      s.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.socket.destroyed || this.socket.readyState === 'closed';
  }

  /** Plain handshake; resolves false if the server closed before answering. */
  async handshake(): Promise<boolean> {
    const c1 = Buffer.alloc(1536, 0x5a);
    c1.fill(0, 0, 8);
    this.write(Buffer.concat([Buffer.from([0x03]), c1]));
    while (this.#buf.length < 3073) {
      if (this.isClosed) return false;
      await new Promise<void>((r) => this.#waiters.push(r));
    }
    this.#handshaken = true;
    this.received += this.#buf.length - 3073;
    this.#tail = this.#buf.subarray(3073).toString('latin1');
    this.write(this.#buf.subarray(1, 1537));
    return true;
  }

  /** Resolves once the server sent more than `n` bytes after the handshake, or closed. */
  async waitReceived(n: number): Promise<boolean> {
    while (this.received <= n && !this.isClosed) await new Promise<void>((r) => this.#waiters.push(r));
    return this.received > n;
  }

  /** Resolves true once `text` (e.g. `NetStream.Publish.Start`) was received, false if closed first. */
  async waitText(text: string): Promise<boolean> {
    while (!this.#tail.includes(text) && !this.isClosed) await new Promise<void>((r) => this.#waiters.push(r));
    return this.#tail.includes(text);
  }

  write(b: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(b);
  }

  close(): void {
    this.socket.destroy();
  }
}
