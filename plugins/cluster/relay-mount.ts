import { ipFamily } from '../../sdk/ip.ts';
import type { HttpScope, StreamTable } from '../../sdk/index.ts';
import type { Log } from './connection.ts';
import { CLIENT_HEADER, HOP_HEADER, type PeerKey } from './peer.ts';
import type { ProxyNode } from './proxy.ts';
import { relayRoute } from './relay-route.ts';
import { StreamRelay } from './relay.ts';

export interface RelayMountOptions {
  http: HttpScope;
  streams: StreamTable;
  node: ProxyNode;
  /** The cluster's signing key (`proxy-mount.ts` reads it). */
  key: PeerKey;
  /** `max_relays`. */
  max: number;
  /** `announce_sec` in ms: how often announced names are compared and readers counted. */
  periodMs: number;
  log: Log;
}

/**
 * The pull relay on this node (`relay.ts`): its demand source on the stream table, and the route
 * other nodes pull this node's streams from (`relay-route.ts`). A pull is signed like a proxied
 * request (hop header, signed client header: the client is this node, its API host).
 */
export function mountRelay(o: RelayMountOptions): StreamRelay {
  const self = (): string => {
    const base = o.node.view().nodes.find((n) => n.id === o.node.id)?.api_address;
    let host = '';
    try { host = base ? new URL(base).hostname.replace(/^\[|\]$/g, '') : ''; } catch { /* none */ }
    return ipFamily(host) ? host : '0.0.0.0';
  };
  const relay = new StreamRelay({
    streams: o.streams, node: o.node, max: o.max, log: o.log, checkMs: Math.min(1000, o.periodMs),
    headers: (to, url) => {
      const signed = o.key.sign({ ip: self(), method: 'GET', url, node: to.node });
      return signed === undefined ? undefined : { [HOP_HEADER]: o.node.id, [CLIENT_HEADER]: signed };
    },
  });
  relayRoute(o.http, { streams: o.streams, vouched: (r) => o.key.vouched(r), quiet: (fn) => relay.quiet(fn), log: o.log });
  return relay;
}
