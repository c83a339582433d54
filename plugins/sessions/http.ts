import type { ServerInfo } from '../../sdk/index.ts';
import type { Collector } from './collector.ts';

const ID = 'HTTP';

/**
 * The `http` collector (reference 12.1): the API listener's traffic, headers included, from client
 * addresses not on the ignore list, as one session `HTTP`. The bytes are the sockets' own counts,
 * from the core (`ServerInfo.onTraffic`): nothing runs per request.
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
