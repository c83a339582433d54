import { connect, type Socket } from 'node:net';
import { RawRtmp, session, message, amf0 } from './wire-kit.ts';

/*
 * The resource attacks of issue 27 on RTMP, shared by test/plugins/rtmp/bounds.test.ts and
 * bench/attacks/rtmp.ts: many connections that send nothing, or a byte now and then, and a
 * legitimate client timed while they are held.
 */

/** One attacking connection: when it opened and when the server closed it. */
export interface HeldConnection {
  socket: Socket;
  openedAt: number;
  /** Set when the connection closed (by the server, unless `stop` was called first). */
  closedAt?: number;
}

export interface Attack {
  conns: HeldConnection[];
  /** Resolves once every connection is closed. */
  allClosed(): Promise<void>;
  /** Closes whatever is still open and stops trickling. */
  stop(): void;
}

/**
 * Opens `n` connections to 127.0.0.1:`port` from `localAddress` (another loopback address than
 * the legitimate clients', so a per-address cap hits the attacker only). With `trickleMs`, each
 * sends one byte of a handshake every `trickleMs`: never enough to finish it, always enough to
 * not be idle.
 */
export function hold(port: number, n: number, opts: { localAddress?: string; trickleMs?: number } = {}): Attack {
  const timers: NodeJS.Timeout[] = [];
  const conns: HeldConnection[] = [];
  const closed: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const socket = connect({ port, host: '127.0.0.1', localAddress: opts.localAddress });
    const c: HeldConnection = { socket, openedAt: Date.now() };
    socket.on('error', () => {});
    closed.push(new Promise((r) => socket.once('close', () => { c.closedAt ??= Date.now(); r(); })));
    if (opts.trickleMs) {
      const timer = setInterval(() => { if (!socket.destroyed) socket.write(Buffer.from([3])); }, opts.trickleMs);
      timers.push(timer);
      socket.once('close', () => clearInterval(timer));
    }
    conns.push(c);
  }
  return {
    conns,
    allClosed: async () => { await Promise.all(closed); },
    stop: () => {
      for (const t of timers) clearInterval(t);
      for (const c of conns) { c.closedAt ??= Date.now(); c.socket.destroy(); }
    },
  };
}

/** How long a connection lived, in ms (until now if still open). */
export const lifetime = (c: HeldConnection): number => (c.closedAt ?? Date.now()) - c.openedAt;

export interface Served {
  /** The player got the publisher's metadata. */
  ok: boolean;
  /** Milliseconds from opening the publisher's connection to the player's first data. */
  ms: number;
}

const metadata = () => message(Buffer.concat([amf0.str('@setDataFrame'), amf0.str('onMetaData'), amf0.ecma([['width', amf0.num(160)]])]), { type: 18, cid: 4, streamId: 1 });

/**
 * A legitimate raw publisher (publish, then its metadata) and a raw player of `name` from
 * 127.0.0.1, timed until the player receives that metadata: the proof that the publish was
 * accepted and the player joined it (the package sends the start statuses before our checks,
 * so those prove nothing). A player that came before the publisher was registered is retried.
 * Everything is closed before it resolves; gives up after `deadlineMs`.
 */
export async function serveOnce(port: number, name: string, deadlineMs = 10_000): Promise<Served> {
  const t0 = Date.now();
  const opened: RawRtmp[] = [];
  const done = (ok: boolean): Served => ({ ok, ms: Date.now() - t0 });
  try {
    const pub = await RawRtmp.open(port);
    opened.push(pub);
    if (!await pub.handshake()) return done(false);
    pub.write(Buffer.concat([session(port, 'live', name, 'publish'), metadata()]));
    while (Date.now() - t0 < deadlineMs && !pub.isClosed) {
      const player = await RawRtmp.open(port);
      opened.push(player);
      if (!await player.handshake()) return done(false);
      player.write(session(port, 'live', name, 'play'));
      if (await player.waitText('onMetaData')) return done(true);
      await new Promise((r) => setTimeout(r, 20));
    }
    return done(false);
  } catch {
    return done(false);
  } finally {
    for (const c of opened) c.close();
  }
}
