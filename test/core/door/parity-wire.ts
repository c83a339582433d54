import { connect, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';

/*
 * The parity suite's client: one request on a fresh raw connection, its answer parsed by hand
 * (status, headers, body, any 1xx before it), then whether the server kept the connection: a
 * second request on it is answered, or the server closed it.
 */

export interface WireRequest {
  method: string;
  /** Sent byte for byte (`..` and `%2e` stay as written). */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** `Expect: 100-continue`: the body goes out only after a 100 (as curl and ffmpeg do). */
  expect?: boolean;
}

export interface WireAnswer {
  /** The 1xx statuses before the answer. */
  interim: number[];
  status: number;
  /** Lower-case names; repeated ones joined with `, `. */
  headers: Record<string, string>;
  /** The body, gunzipped when sent gzip. */
  body: Buffer;
  /** What the connection did after the answer: `kept` (a second request answered) or `closed`. */
  after: string;
}

/** How long a kept connection may take to answer the probe (an unanswered probe reads `silent`). */
const PROBE_DEADLINE_MS = 5_000;

interface Parsed { status: number; headers: Record<string, string>; body: Buffer; rest: Buffer }

/** One response from the front of `buf`, or undefined while incomplete (`eof`: the server closed). */
function parse(buf: Buffer, head: boolean, eof: boolean): Parsed | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const at = line.indexOf(':');
    const name = line.slice(0, at).trim().toLowerCase();
    const value = line.slice(at + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const from = end + 4;
  if (status < 200 || head || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0), rest: buf.subarray(from) };
  if (headers['transfer-encoding'] === 'chunked') return chunked(buf, from, status, headers);
  if (headers['content-length'] !== undefined) {
    const to = from + Number(headers['content-length']);
    return buf.length < to ? undefined : { status, headers, body: buf.subarray(from, to), rest: buf.subarray(to) };
  }
  return eof ? { status, headers, body: buf.subarray(from), rest: Buffer.alloc(0) } : undefined;
}

function chunked(buf: Buffer, from: number, status: number, headers: Record<string, string>): Parsed | undefined {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (buf.length < eol + 2 + size + 2) return undefined;
    if (size === 0) return { status, headers, body: Buffer.concat(parts), rest: buf.subarray(eol + 4) };
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

function headText(r: WireRequest): string {
  const headers: Record<string, string> = { host: 'parity', ...r.headers };
  if (r.body !== undefined) headers['content-length'] = String(Buffer.byteLength(r.body));
  if (r.expect) headers.expect = '100-continue';
  return `${r.method} ${r.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

/** Reads answers off `sock` in order; `next(head)` resolves with the next one (undefined: closed first). */
function reader(sock: Socket): (head: boolean) => Promise<Parsed | undefined> {
  let buf: Buffer = Buffer.alloc(0);
  let eof = false;
  let wake: () => void = () => {};
  sock.on('data', (c: Buffer) => { buf = Buffer.concat([buf, c]); wake(); });
  sock.on('close', () => { eof = true; wake(); });
  return async (head) => {
    for (;;) {
      const p = parse(buf, head, eof);
      if (p) {
        buf = p.rest;
        return p;
      }
      if (eof) return undefined;
      await new Promise<void>((resolve) => { wake = resolve; });
    }
  };
}

/** Sends `r` on a new connection to `port`; the socket is always destroyed before this resolves. */
export async function exchange(port: number, r: WireRequest): Promise<WireAnswer> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => {});
  try {
    await new Promise<void>((resolve, reject) => { sock.once('connect', resolve); sock.once('close', () => reject(new Error('refused'))); });
    const next = reader(sock);
    const head = r.method === 'HEAD';
    sock.write(headText(r));
    const interim: number[] = [];
    if (r.body !== undefined && !r.expect) sock.write(r.body);
    let got = await next(head);
    while (got && got.status < 200) {
      interim.push(got.status);
      if (got.status === 100 && r.body !== undefined) sock.write(r.body);
      got = await next(head);
    }
    if (!got) throw new Error(`no answer to ${r.method} ${r.path}`);
    const gz = got.headers['content-encoding'] === 'gzip' && got.body.length > 0;
    return { interim, status: got.status, headers: got.headers, body: gz ? gunzipSync(got.body) : got.body, after: await probe(sock, next) };
  } finally {
    sock.destroy();
  }
}

/** A second request on the connection: `kept` when answered, `closed` when the server closed it. */
async function probe(sock: Socket, next: (head: boolean) => Promise<Parsed | undefined>): Promise<string> {
  if (sock.destroyed || sock.readableEnded) return 'closed';
  sock.write('GET /ping HTTP/1.1\r\nhost: parity\r\n\r\n');
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('silent'), PROBE_DEADLINE_MS); });
  try {
    return await Promise.race([next(false).then((p) => (p ? `kept (${p.status})` : 'closed')), silent]);
  } finally {
    clearTimeout(timer);
  }
}
