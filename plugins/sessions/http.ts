import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Collector } from './collector.ts';

interface Tracked { socket: Socket; rx: number; tx: number }

const ID = 'HTTP';

/**
 * The `http` collector (reference 12.1): all HTTP traffic of the API listener, headers included,
 * as one session `HTTP` (location and peer `any`), from TCP peers not on the ignore list. Bytes
 * come from the sockets' own counters, read once a second and when a connection closes: nothing
 * runs per request, so the memfs fast path stays as fast. Returns the poll (for the tick) and
 * what stops it.
 */
export function trackHttp(server: Server, http: Collector): { poll(): void; stop(): void } {
  const live = new Set<Tracked>();
  const count = (t: Tracked) => {
    const rx = t.socket.bytesRead;
    const tx = t.socket.bytesWritten;
    if (rx === t.rx && tx === t.tx) return;
    if (!http.has(ID)) http.register(ID, { reference: '', location: 'any', peer: 'any' }, true);
    if (rx > t.rx) http.ingress(ID, rx - t.rx);
    if (tx > t.tx) http.egress(ID, tx - t.tx);
    t.rx = rx;
    t.tx = tx;
  };
  const onConnection = (socket: Socket) => {
    if (!http.collectable(socket.remoteAddress ?? '')) return;
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
