import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** Raw HTTP clients for the listener bounds: what a client sends byte by byte, and what it got. */

export interface RawOptions {
  /** A loopback address of its own (127.0.0.x), so a test client is a distinct address. */
  localAddress?: string;
  /** Over TLS, trusting `ca`. */
  tls?: { ca: Buffer };
}

/** What came back on a connection, once it closed. */
export interface RawOutcome {
  status: number;
  /** The body after the head (an Error body as JSON text). */
  body: string;
}

/** Connects (TCP or TLS) from `localAddress`; resolves once writable, the socket's errors swallowed. */
export function open(port: number, o: RawOptions = {}): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const tcp = connect({ host: '127.0.0.1', port, localAddress: o.localAddress }, () => { if (!o.tls) resolve(tcp); });
    const s: Socket = o.tls ? tlsConnect({ socket: tcp, ca: o.tls.ca, servername: 'localhost' }, () => resolve(s)) : tcp;
    tcp.on('error', () => {});
    s.once('error', reject);
    s.on('error', () => {});
  });
}

/** Everything the server sends until it closes the connection, parsed as one answer (status 0: none). */
export function untilClosed(s: Socket): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      const at = text.indexOf('\r\n\r\n');
      resolve({ status: m ? Number(m[1]) : 0, body: at < 0 ? '' : text.slice(at + 4) });
    };
    if (s.destroyed) done();
    else s.once('close', done);
  });
}

/** Sends `text` on a new connection and waits until the server closes it. */
export async function exchange(port: number, text: string, o: RawOptions = {}): Promise<RawOutcome> {
  const s = await open(port, o);
  const out = untilClosed(s);
  s.write(text);
  return out;
}

/**
 * Whether a kept-alive connection is served: a `GET /ping` on it, true on an answer, false when
 * the server closed it instead (a connection over the per-address limit is closed unread).
 */
export function served(s: Socket): Promise<boolean> {
  return new Promise((resolve) => {
    if (s.destroyed) {
      resolve(false);
      return;
    }
    const onData = (c: Buffer) => {
      if (c.toString('latin1').startsWith('HTTP/1.1 200')) finish(true);
    };
    const finish = (v: boolean) => {
      s.off('data', onData);
      s.off('close', onClose);
      resolve(v);
    };
    const onClose = () => finish(false);
    s.on('data', onData);
    s.once('close', onClose);
    s.write('GET /ping HTTP/1.1\r\nHost: x\r\n\r\n', (err) => { if (err) finish(false); });
  });
}

/** A JSON body sent a few bytes at a time every `everyMs`, until the server closes (or `max` writes). */
export function trickle(s: Socket, everyMs: number, max = 10_000): () => void {
  let n = 0;
  const timer = setInterval(() => {
    if (s.destroyed || ++n > max) {
      clearInterval(timer);
      return;
    }
    s.write(' ');
  }, everyMs);
  s.once('close', () => clearInterval(timer));
  return () => clearInterval(timer);
}
