import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { ingestHooksRef, RunCredentials, StreamTable, TlsCertificates } from '../../sdk/index.ts';
import { BootError } from '../../sdk/index.ts';
import { loadWireLayer } from './nms-adapter.ts';
import { RtmpSession, type SessionDeps } from './session.ts';
import { RtmpListener, type ListenerOptions } from './server.ts';
import { ConnectionLimits } from './limits.ts';
import type { RtmpSettings } from './schema.ts';
import type { RtmpService, RtmpChannelInfo } from './ref.ts';

/**
 * A player more than this far behind (its queue and its socket's unsent bytes) is dropped: about
 * 25 s at 2.5 Mbit/s. The queued messages are shared with every other player (README "Memory per
 * player"): what a lagging player costs of its own is 8 bytes per queued message.
 */
const MAX_PLAYER_BACKLOG = 8 * 1024 * 1024;
/** The publisher protocols of this plugin's streams. */
const RTMP_PROTOCOLS = ['rtmp', 'rtmps'];

export interface RtmpStartOptions {
  config: RtmpSettings;
  hooks: Readonly<ReturnType<typeof ingestHooksRef.create>>;
  tls: TlsCertificates;
  /** The app's stream table (`streamTableRef`). */
  streams: StreamTable;
  /** The children's run credentials (`runCredentialsRef`): a run's token stands in for `rtmp.token`. */
  runs?: RunCredentials;
  log: Logger;
}

/** The running RTMP(S) service of one app; `close` stops the listeners and every connection. */
export interface RunningRtmp extends RtmpService {
  close(): Promise<void>;
}

/**
 * Binds `rtmp.address` (and `rtmp.address_tls` with `enable_tls`) and serves publish and play.
 * This module is imported only when `rtmp.enable` is on: it loads node-media-server.
 */
export async function startRtmp(o: RtmpStartOptions): Promise<RunningRtmp> {
  const wire = loadWireLayer();
  let seq = 0;
  const c = o.config;
  const base: Omit<SessionDeps, 'protocol'> = {
    wire, streams: o.streams, nextId: () => `rtmp-${++seq}`, hooks: o.hooks, log: o.log, token: c.token, runs: o.runs, app: c.app, maxPlayerBacklog: MAX_PLAYER_BACKLOG,
    limits: { maxMediaMessage: c.max_message_size_kbytes * 1024 },
    handshakeTimeout: c.handshake_timeout_seconds, idleTimeout: c.idle_timeout_seconds,
  };
  // a session lives as long as its socket: the listener tracks the sockets, the stream table the streams
  const accept = (protocol: string) => (socket: Socket) => { new RtmpSession(socket, { ...base, protocol }); };
  const shared: ListenerOptions = {
    log: o.log, handshakeTimeoutMs: c.handshake_timeout_seconds * 1000,
    limits: new ConnectionLimits({ total: c.max_connections, perAddress: c.max_connections_per_address }, o.log),
  };

  const listeners: RtmpListener[] = [];
  const closeAll = async () => { await Promise.all(listeners.map((l) => l.close())); };
  try {
    const plain = new RtmpListener(accept('rtmp'), shared);
    listeners.push(plain);
    await plain.listen('rtmp.address', c.address);
    if (o.config.enable_tls) {
      const pair = o.tls.current();
      if (!pair) throw new BootError('rtmp.enable_tls needs the TLS certificate (tls.cert_file and tls.key_file, or tls.auto)');
      const secure = new RtmpListener(accept('rtmps'), { ...shared, tls: { cert: pair.cert, key: pair.key } });
      listeners.push(secure);
      await secure.listen('rtmp.address_tls', o.config.address_tls);
      const off = o.tls.onChange((next) => secure.setSecureContext({ cert: next.cert, key: next.key }));
      listeners.push({ close: async () => off() } as RtmpListener);
    }
  } catch (err) {
    await closeAll();
    throw err;
  }

  const ports = { rtmp: listeners[0]!.port, rtmps: o.config.enable_tls ? listeners[1]!.port : undefined };
  o.log.info({ ports, app: o.config.app }, 'rtmp server listening');
  return {
    ports: () => ({ ...ports }),
    // the streams RTMP publishes (the table's name with the RTMP path's leading '/'); players of every protocol
    channels: (): RtmpChannelInfo[] => o.streams.list(RTMP_PROTOCOLS).map((s) => ({
      name: `/${s.name}`, publisher: { id: s.publisher.id, remote: s.publisher.remote }, players: s.readers.length,
      videoCodec: s.videoCodec, audioCodec: s.audioCodec, since: s.since,
    })),
    close: closeAll,
  };
}
