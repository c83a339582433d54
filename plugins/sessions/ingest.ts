import { ingestHooksRef, type IngestPeer, type IngestTraffic, type PluginHooks } from '../../sdk/index.ts';
import type { SessionRegistry } from './registry.ts';
import type { Collector } from './collector.ts';
import { baseName } from './hls.ts';

interface Tracked { peer: IngestPeer; id: string; c: Collector; rx: number; tx: number }

/** `rtmp`/`rtmps` count as `rtmp`; `srt` as `srt`; a vendor protocol gets its own collector. */
const collectorOf = (protocol: string) => (protocol.startsWith('rtmp') ? 'rtmp' : protocol);

/**
 * Publishers and players of every ingest protocol, from the ingest hooks: one active session per
 * connection, bytes from `peer.traffic()`. Returns the poll (every connection's traffic) for the
 * registry's 1 s tick; a connection's end polls it once more.
 */
export function tapIngest(hooks: PluginHooks, registry: SessionRegistry): () => void {
  const live = new Map<string, Tracked>();
  const start = (kind: 'publish' | 'play') => (peer: IngestPeer) => {
    const c = registry.collector(collectorOf(peer.protocol));
    if (!c.collectable(peer.remote)) return;
    // a publisher is known by its stream, a player by its address (reference 12.1); the
    // connection id keeps two connections of one address apart
    const id = `${kind === 'publish' ? peer.stream : peer.remote}#${peer.id}`;
    c.register(id, { reference: baseName(peer.stream), location: `${kind}:${peer.stream}`, peer: peer.remote }, true);
    live.set(peer.id, { peer, id, c, rx: 0, tx: 0 });
  };
  const poll = (t: Tracked, traffic = t.peer.traffic()) => {
    if (traffic.rxBytes > t.rx) t.c.ingress(t.id, traffic.rxBytes - t.rx);
    if (traffic.txBytes > t.tx) t.c.egress(t.id, traffic.txBytes - t.tx);
    t.rx = Math.max(t.rx, traffic.rxBytes);
    t.tx = Math.max(t.tx, traffic.txBytes);
  };
  const end = (peer: IngestPeer, traffic: IngestTraffic) => {
    const t = live.get(peer.id);
    if (!t) return;
    poll(t, traffic);
    live.delete(peer.id);
    t.c.close(t.id);
  };
  hooks.tap(ingestHooksRef, 'onPublish', start('publish'));
  hooks.tap(ingestHooksRef, 'onPlay', start('play'));
  hooks.tap(ingestHooksRef, 'onPublishEnd', end);
  hooks.tap(ingestHooksRef, 'onPlayEnd', end);
  return () => {
    for (const t of live.values()) poll(t);
  };
}
