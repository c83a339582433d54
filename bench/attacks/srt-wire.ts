import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';

/**
 * A handshake flood on an SRT listener in raw UDP: datagrams of random bytes, induction requests
 * (the first packet of a caller's handshake, answered by a stateless listener with a cookie) and
 * conclusion requests with a cookie the listener never gave. Each kind from its own sockets (so the
 * answers can be told apart), all bound to one loopback address of the attacker's.
 */

export type DatagramKind = 'garbage' | 'induction' | 'conclusion';
const KINDS: readonly DatagramKind[] = ['garbage', 'induction', 'conclusion'];

export interface FloodResult {
  sent: Record<DatagramKind, number>;
  /** Datagrams that came back on the sockets of each kind. */
  answered: Record<DatagramKind, number>;
  seconds: number;
}

const HANDSHAKE_INDUCTION = 1;
const HANDSHAKE_CONCLUSION = -1;
const rand32 = () => Math.floor(Math.random() * 0x1_0000_0000);

/** A handshake control packet (SRT header + handshake CIF, 64 bytes). */
export function handshakePacket(o: { version: number; ext: number; type: number; cookie: number }): Buffer {
  const b = Buffer.alloc(64);
  b.writeUInt32BE(0x8000_0000, 0); // control packet, type 0: handshake
  b.writeUInt32BE(Math.floor(performance.now() * 1000) >>> 0, 8);
  b.writeUInt32BE(0, 12); // destination socket: the listener
  b.writeUInt32BE(o.version, 16);
  b.writeUInt16BE(0, 20); // no encryption advertised
  b.writeUInt16BE(o.ext, 22);
  b.writeUInt32BE(rand32() & 0x7fff_ffff, 24); // initial sequence number
  b.writeUInt32BE(1500, 28); // MTU
  b.writeUInt32BE(8192, 32); // flow window
  b.writeInt32BE(o.type, 36);
  b.writeUInt32BE(rand32(), 40); // the caller's socket id
  b.writeUInt32BE(o.cookie, 44);
  b.writeUInt32BE(0x7f00_0001, 48);
  return b;
}

function datagram(kind: DatagramKind): Buffer {
  if (kind === 'induction') return handshakePacket({ version: 4, ext: 2, type: HANDSHAKE_INDUCTION, cookie: 0 });
  // version 5 with the HSREQ and CONFIG flags, a made-up cookie
  if (kind === 'conclusion') return handshakePacket({ version: 5, ext: 0x5, type: HANDSHAKE_CONCLUSION, cookie: rand32() });
  return randomBytes(1 + Math.floor(Math.random() * 1400));
}

function bound(from: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind(0, from, () => { s.off('error', reject); s.on('error', () => {}); resolve(s); });
  });
}

/**
 * Sends datagrams of each kind round-robin from `socketsPerKind` sockets per kind, `batch` at a
 * time, until `seconds` passed or `maxPerKind` of each were sent; yields between batches so the
 * caller's timers (RSS sampling, API polling) keep running.
 */
export async function udpFlood(o: { port: number; from: string; seconds: number; maxPerKind: number; socketsPerKind?: number; batch?: number }): Promise<FloodResult> {
  const per = o.socketsPerKind ?? 16;
  const sent = { garbage: 0, induction: 0, conclusion: 0 };
  const answered = { garbage: 0, induction: 0, conclusion: 0 };
  const sockets: Array<{ kind: DatagramKind; s: Socket }> = [];
  for (const kind of KINDS) {
    for (let i = 0; i < per; i++) {
      const s = await bound(o.from);
      s.on('message', () => { answered[kind]++; });
      sockets.push({ kind, s });
    }
  }
  const t0 = performance.now();
  const deadline = t0 + o.seconds * 1000;
  let next = 0;
  try {
    while (performance.now() < deadline && KINDS.some((k) => sent[k] < o.maxPerKind)) {
      const pending: Array<Promise<void>> = [];
      for (let i = 0; i < (o.batch ?? 64); i++) {
        const { kind, s } = sockets[next++ % sockets.length]!;
        if (sent[kind] >= o.maxPerKind) continue;
        sent[kind]++;
        pending.push(new Promise((r) => s.send(datagram(kind), o.port, '127.0.0.1', () => r())));
      }
      await Promise.all(pending);
      await new Promise((r) => setImmediate(r));
    }
    const seconds = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 500)); // late answers
    return { sent, answered, seconds };
  } finally {
    for (const { s } of sockets) s.close();
  }
}
