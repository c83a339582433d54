import { ingestHooksRef, type IngestPeer, type IngestTraffic, type PluginHooks, type StreamTable } from '../../sdk/index.ts';
import type { SessionRegistry } from './registry.ts';

interface Tracked { peer: IngestPeer; id: string; collector: string; rx: number; tx: number; tick: number }

/** `rtmp`/`rtmps` count as `rtmp`; `srt` as `srt`; a vendor protocol gets its own collector. */
const collectorOf = (protocol: string) => (protocol.startsWith('rtmp') ? 'rtmp' : protocol);
/** `/live/abc.stream` -> `abc`; an SRT resource stays as it is. */
const referenceOf = (stream: string) => stream.slice(stream.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '');

/**
 * Publishers and players of every ingest protocol (RTMP, SRT, a vendor's), from the ingest
 * hooks: one session per connection, registered active, bytes from `peer.traffic()` polled once a
 * second and once more when the connection ends. The poll walks the service's stream table (every
 * publisher and reader, whatever the protocol), then the sessions it did not meet there. Returns
 * the poll, for the registry's tick.
 */
export function tapIngest(hooks: PluginHooks, registry: SessionRegistry, streams: StreamTable): () => void {
  const live = new Map<string, Tracked>();
  const start = (kind: 'publish' | 'play') => (peer: IngestPeer) => {
    const collector = collectorOf(peer.protocol);
    const c = registry.collector(collector);
    if (!c.collectable(peer.remote)) return;
    // a publisher is known by its stream, a player by its address (reference 12.1); the
    // connection id keeps two connections of one address apart
    const id = `${kind === 'publish' ? peer.stream : peer.remote}#${peer.id}`;
    c.register(id, { reference: referenceOf(peer.stream), location: `${kind}:${peer.stream}`, peer: peer.remote }, true);
    live.set(peer.id, { peer, id, collector, rx: 0, tx: 0, tick: 0 });
  };
  const poll = (t: Tracked, traffic = t.peer.traffic()) => {
    const c = registry.collector(t.collector);
    if (traffic.rxBytes > t.rx) c.ingress(t.id, traffic.rxBytes - t.rx);
    if (traffic.txBytes > t.tx) c.egress(t.id, traffic.txBytes - t.tx);
    t.rx = Math.max(t.rx, traffic.rxBytes);
    t.tx = Math.max(t.tx, traffic.txBytes);
  };
  const end = (peer: IngestPeer, traffic: IngestTraffic) => {
    const t = live.get(peer.id);
    if (!t) return;
    poll(t, traffic);
    live.delete(peer.id);
    registry.collector(t.collector).close(t.id);
  };
  hooks.tap(ingestHooksRef, 'onPublish', start('publish'));
  hooks.tap(ingestHooksRef, 'onPlay', start('play'));
  hooks.tap(ingestHooksRef, 'onPublishEnd', end);
  hooks.tap(ingestHooksRef, 'onPlayEnd', end);
  let tick = 0;
  const polled = (t: Tracked | undefined) => {
    if (!t) return;
    t.tick = tick;
    poll(t);
  };
  return () => {
    if (live.size === 0) return;
    tick++;
    for (const s of streams.list()) {
      polled(live.get(s.publisher.id));
      for (const r of s.readers) polled(live.get(r.peer.id));
    }
    // a connection of a protocol that keeps its streams elsewhere (or one between table and hook)
    for (const t of live.values()) if (t.tick !== tick) poll(t);
  };
}
