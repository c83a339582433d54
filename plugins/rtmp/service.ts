import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { RunCredentials, StreamTable, TlsCertificates } from '../../sdk/index.ts';
import { BootError } from '../../sdk/index.ts';
import { loadWireLayer } from './nms-adapter.ts';
import { MAX_UNFINISHED_BYTES, type UnfinishedBudget } from './wire-chunks.ts';
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
  tls: TlsCertificates;
  /** The app's stream table (`streamTableRef`): it admits every publish and play (the ingest hooks). */
  streams: StreamTable;
  /** The children's run credentials (`runCredentialsRef`): a run's token stands in for `rtmp.token`. */
  runs?: RunCredentials;
  log: Logger;
}

/**
 * The running RTMP(S) service: its listeners and live connections, kept across config reloads
 * while `listenerSettings` are unchanged (`ctx.keep`); `bind` hands it to the next app.
 */
export interface RunningRtmp extends RtmpService {
  /** This app's services, logger and settings: new connections use them at once. */
  bind(o: RtmpStartOptions): void;
  /**
   * Once every plugin of the app is mounted (`onReady`: every hook tapped): the live connections
   * are checked again (token, app: a refused one is ended) and announced to the hooks through
   * the table (`announce`: `onPublish` / `onPlay`, their bytes counted from now on). None on a new server.
   */
  announce(): void;
  /** Stops the listeners and every connection (their end hooks fire). */
  close(): Promise<void>;
}

/** The settings only a new listener can take: a change rebinds (and ends its connections). */
export function listenerSettings(c: RtmpSettings): Record<string, unknown> {
  return c.enable_tls
    ? { address: c.address, enable_tls: true, address_tls: c.address_tls, handshake_timeout_seconds: c.handshake_timeout_seconds }
    : { address: c.address, enable_tls: false };
}

/** What every connection of one protocol shares, from one app's options; re-bound by a reload. */
function sessionDeps(o: RtmpStartOptions, unfinished: UnfinishedBudget): Omit<SessionDeps, 'protocol' | 'wire' | 'nextId'> {
  const c = o.config;
  return {
    streams: o.streams, log: o.log, token: c.token, runs: o.runs, app: c.app, maxPlayerBacklog: MAX_PLAYER_BACKLOG,
    limits: { maxMediaMessage: c.max_message_size_kbytes * 1024, unfinished },
    handshakeTimeout: c.handshake_timeout_seconds, idleTimeout: c.idle_timeout_seconds,
  };
}

const capsOf = (c: RtmpSettings) => ({ total: c.max_connections, perAddress: c.max_connections_per_address });

/**
 * Binds `rtmp.address` (and `rtmp.address_tls` with `enable_tls`) and serves publish and play.
 * This module is imported only when `rtmp.enable` is on: it loads node-media-server.
 */
export async function startRtmp(o: RtmpStartOptions): Promise<RunningRtmp> {
  const wire = loadWireLayer();
  // the bytes of unfinished messages every connection holds, together (each holds at most twice
  // its largest message): 100 connections of one address held 1.6 GB before
  const unfinished: UnfinishedBudget = { held: 0, max: MAX_UNFINISHED_BYTES };
  let seq = 0;
  let bound = o;
  const nextId = () => `rtmp-${++seq}`;
  // one deps object per protocol, shared by its sessions: a reload assigns the next app's into it
  const deps: Record<string, SessionDeps> = {
    rtmp: { ...sessionDeps(o, unfinished), wire, nextId, protocol: 'rtmp' },
    rtmps: { ...sessionDeps(o, unfinished), wire, nextId, protocol: 'rtmps' },
  };
  const live = new Set<RtmpSession>();
  // a session lives as long as its socket: the listener tracks the sockets, the stream table the streams
  const accept = (protocol: string) => (socket: Socket) => {
    const s = new RtmpSession(socket, deps[protocol]!);
    live.add(s);
    socket.once('close', () => live.delete(s));
  };
  const limits = new ConnectionLimits(capsOf(o.config), o.log);
  const shared: ListenerOptions = { log: o.log, handshakeTimeoutMs: o.config.handshake_timeout_seconds * 1000, limits };

  const listeners: RtmpListener[] = [];
  let offTls = () => {};
  const closeAll = async () => { offTls(); await Promise.all(listeners.map((l) => l.close())); };
  try {
    const plain = new RtmpListener(accept('rtmp'), shared);
    listeners.push(plain);
    await plain.listen('rtmp.address', o.config.address);
    if (o.config.enable_tls) {
      const pair = o.tls.current();
      if (!pair) throw new BootError('rtmp.enable_tls needs the TLS certificate (tls.cert_file and tls.key_file, or tls.auto)');
      const secure = new RtmpListener(accept('rtmps'), { ...shared, tls: { cert: pair.cert, key: pair.key } });
      listeners.push(secure);
      await secure.listen('rtmp.address_tls', o.config.address_tls);
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
    channels: (): RtmpChannelInfo[] => bound.streams.list(RTMP_PROTOCOLS).map((s) => ({
      name: `/${s.name}`, publisher: { id: s.publisher.id, remote: s.publisher.remote }, players: s.readers.length,
      videoCodec: s.videoCodec, audioCodec: s.audioCodec, since: s.since,
    })),
    bind: (next) => {
      bound = next;
      for (const d of Object.values(deps)) Object.assign(d, sessionDeps(next, unfinished));
      limits.rebind(capsOf(next.config), next.log);
      const secure = listeners[1];
      offTls();
      if (secure) {
        // the certificate of the new app's TLS service, now and after each renewal
        const pair = next.tls.current();
        if (pair) secure.setSecureContext({ cert: pair.cert, key: pair.key });
        offTls = next.tls.onChange((p) => secure.setSecureContext({ cert: p.cert, key: p.key }));
      }
    },
    announce: () => { for (const s of [...live]) s.rebound(); },
    close: closeAll,
  };
}
