import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { isServingThreadSocket, type ServingThreads } from '../../sdk/index.ts';
import type { Collector } from './collector.ts';

interface Tracked { socket: Socket; rx: number; tx: number }

const ID = 'HTTP';

/**
 * The `http` collector (reference 12.1): all HTTP traffic of the API listener, headers included,
 * as one session `HTTP` (location and peer `any`), from TCP peers not on the ignore list. Bytes
 * come from the sockets' own counters, read once a second and when a connection closes: nothing
 * runs per request, so the memfs fast path stays as fast. With serving threads, their sockets'
 * bytes arrive per client address about once a second (the same ignore list applies), and the
 * loopback hop of what they forward to main is not counted again. Returns the poll (for the
 * tick) and what stops it.
 */
export function trackHttp(server: Server, http: Collector, threads?: ServingThreads): { poll(): void; stop(): void } {
  const live = new Set<Tracked>();
  const add = (rx: number, tx: number) => {
    if (!http.has(ID)) http.register(ID, { reference: '', location: 'any', peer: 'any' }, true);
    if (rx > 0) http.ingress(ID, rx);
    if (tx > 0) http.egress(ID, tx);
  };
  const count = (t: Tracked) => {
    const rx = t.socket.bytesRead;
    const tx = t.socket.bytesWritten;
    if (rx === t.rx && tx === t.tx) return;
    add(rx - t.rx, tx - t.tx);
    t.rx = rx;
    t.tx = tx;
  };
  threads?.onTraffic((peers) => {
    for (const p of peers) if ((p.rx > 0 || p.tx > 0) && http.collectable(p.peer)) add(p.rx, p.tx);
  });
  const onConnection = (socket: Socket) => {
    if (isServingThreadSocket(socket) || !http.collectable(socket.remoteAddress ?? '')) return;
    const t: Tracked = { socket, rx: 0, tx: 0 };
    live.add(t);
    socket.once('close', () => {
      count(t);
      live.delete(t);
    });
  };
  server.on('connection', onConnection);
  return {
    poll: () => { for (const t of live) count(t); },
    stop: () => { server.off('connection', onConnection); },
  };
}
