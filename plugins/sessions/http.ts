import type { ServerInfo } from '../../sdk/index.ts';
import type { Collector } from './collector.ts';

const ID = 'HTTP';

/**
 * The `http` collector (reference 12.1): all HTTP traffic of the API listener, headers included,
 * as one session `HTTP` (location and peer `any`), from client addresses not on the ignore list.
 * The bytes come from the core (`ServerInfo.onTraffic`: the sockets' own counters of every loop
 * that serves the listener, about once a second and when a connection closes), so nothing runs
 * per request and every byte counts once.
 */
export function trackHttp(server: ServerInfo, http: Collector): void {
  const add = (rx: number, tx: number) => {
    if (!http.has(ID)) http.register(ID, { reference: '', location: 'any', peer: 'any' }, true);
    if (rx > 0) http.ingress(ID, rx);
    if (tx > 0) http.egress(ID, tx);
  };
  server.onTraffic?.((peers) => {
    for (const p of peers) if ((p.rx > 0 || p.tx > 0) && http.collectable(p.peer)) add(p.rx, p.tx);
  });
}
