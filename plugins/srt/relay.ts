import type { Logger } from 'pino';
import { askIngest, tellIngest, type ingestHooksRef } from '../../sdk/index.ts';
import { Channel } from './channel.ts';
import { SrtPeer } from './peer.ts';
import { parseStreamId } from './streamid.ts';
import { rejectName } from './errors.ts';
import { toSrtStatistics, type SrtStatistics } from './stats.ts';
import type { SrtEventType, SrtNativeSocket } from './native.ts';
import type { EventsLog, TopicLog } from './events-log.ts';

type IngestHooks = Readonly<ReturnType<(typeof ingestHooksRef)['create']>>;

export interface SrtChannels {
  publisher: Record<string, number>;
  subscriber: Record<string, number[]>;
  connections: Record<string, { log: TopicLog; stats: SrtStatistics }>;
  log: TopicLog;
}

/**
 * The SRT server's logic over the addon's events: streamid routing, one publisher per name,
 * fan-out, the ingest hooks, and the listing. No sockets here: `native` does the I/O.
 */
export class SrtRelay {
  #native: SrtNativeSocket | undefined;
  #peers = new Map<number, SrtPeer>();
  #channels = new Map<string, Channel>();
  #log: Logger;
  #hooks: IngestHooks;
  #token: string;
  #closed = false;
  #events: EventsLog;

  constructor(opts: { log: Logger; hooks: IngestHooks; token: string; events: EventsLog }) {
    this.#log = opts.log;
    this.#events = opts.events;
    this.#hooks = opts.hooks;
    this.#token = opts.token;
  }

  attach(native: SrtNativeSocket): void {
    this.#native = native;
  }

  /** The addon's event callback. */
  readonly onEvent = (type: SrtEventType, sock: number, text: string, extra: string | Buffer, code: number): void => {
    if (this.#closed) return;
    if (type === 'data') this.#data(sock, extra as Buffer);
    else if (type === 'accept') void this.#accept(sock, text, extra as string);
    else if (type === 'close') this.#end(sock, text);
    else this.#rejected(text, extra as string, code);
  };

  #rejected(streamid: string, peer: string, code: number): void {
    const parts = describe(streamid);
    this.#log.warn({ peer, ...parts, reason: rejectName(code) }, 'SRT connection refused in the handshake');
    this.#events.add('handshake:reject', `${rejectName(code)}: ${parts.stream ?? '(no resource)'} from ${peer}`);
  }

  #data(sock: number, data: Buffer): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    peer.received += data.length;
    const ch = this.#channels.get(peer.stream);
    if (ch?.publisher === sock) ch.feed(data);
  }

  async #accept(sock: number, streamid: string, remote: string): Promise<void> {
    // SRT v4 callers send no streamid: a publisher named after its address, as Core does
    const parsed = streamid === '' ? { ok: true as const, id: { resource: remote, mode: 'publish' as const, params: {} } } : parseStreamId(streamid);
    if (!parsed.ok) return this.#refuse(sock, remote, undefined, parsed.reason);
    const { resource, mode, token, params } = parsed.id;
    if (this.#token && token !== this.#token) return this.#refuse(sock, remote, resource, 'UNAUTHORIZED: wrong or missing token');
    const peer = new SrtPeer(sock, resource, mode, remote, token, params);
    this.#peers.set(sock, peer);
    const veto = await askIngest(mode === 'publish' ? this.#hooks.prePublish : this.#hooks.prePlay, peer);
    if (!this.#peers.has(sock)) return; // gone while the hooks ran
    if (veto) return this.#refuse(sock, remote, resource, `${(veto.kind ?? 'forbidden').toUpperCase()}: ${veto.reason}`);
    const ch = this.#channels.get(resource);
    if (mode === 'publish') {
      if (ch) return this.#refuse(sock, remote, resource, 'CONFLICT: already publishing');
      const send = (s: number, d: Buffer) => this.#native?.send(s, d) ?? 0;
      // a subscriber that takes nothing for about a second is closed rather than fed forever
      this.#channels.set(resource, new Channel(resource, sock, send, (s) => queueMicrotask(() => this.#kick(s, 'too slow: its send buffer stayed full'))));
      this.#pushPublishers();
      this.#announce(peer, 'onPublish');
      this.#events.add('connection:new', `publish ${resource} from ${remote}`, sock);
      this.#log.info({ id: peer.id, stream: resource, peer: remote }, 'SRT publisher started');
    } else {
      if (!ch) return this.#refuse(sock, remote, resource, 'NOTFOUND: nothing publishes this stream');
      ch.subscribers.set(sock, peer);
      this.#announce(peer, 'onPlay');
      this.#events.add('connection:new', `request ${resource} from ${remote}`, sock);
      this.#log.info({ id: peer.id, stream: resource, peer: remote }, 'SRT subscriber started');
    }
  }

  #kick(sock: number, why: string): void {
    if (!this.#peers.has(sock)) return;
    this.#log.warn({ id: `srt-${sock}`, why }, 'SRT subscriber closed');
    this.#native?.close(sock);
    this.#end(sock, why);
  }

  #announce(peer: SrtPeer, hook: 'onPublish' | 'onPlay'): void {
    peer.announced = true;
    tellIngest(this.#hooks[hook], (err) => this.#log.error({ err }, `ingest ${hook} tap failed`), peer);
  }

  #refuse(sock: number, remote: string, stream: string | undefined, reason: string): void {
    this.#log.warn({ peer: remote, stream, reason }, 'SRT connection refused');
    this.#events.add('connection:refuse', `${reason}: ${stream ?? '(no resource)'} from ${remote}`);
    this.#peers.delete(sock);
    this.#native?.close(sock);
  }

  /** A connection ended (closed, broken, or closed by us): publisher ends take their subscribers. */
  #end(sock: number, why: string): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    this.#peers.delete(sock);
    const ch = this.#channels.get(peer.stream);
    if (ch?.publisher === sock) {
      this.#channels.delete(peer.stream);
      this.#pushPublishers();
      for (const sub of ch.subscribers.keys()) {
        this.#native?.close(sub);
        this.#end(sub, 'publisher gone');
      }
    } else {
      ch?.subscribers.delete(sock);
    }
    this.#log.info({ id: peer.id, stream: peer.stream, why, ...peer.traffic(), dropped: peer.dropped }, `SRT ${peer.mode === 'publish' ? 'publisher' : 'subscriber'} ended`);
    this.#events.add('connection:close', `${peer.mode} ${peer.stream}: ${why}`, sock);
    this.#events.forget(sock);
    if (peer.announced) {
      const hook = peer.mode === 'publish' ? this.#hooks.onPublishEnd : this.#hooks.onPlayEnd;
      tellIngest(hook, (err) => this.#log.error({ err }, 'ingest end tap failed'), peer, peer.traffic());
    }
  }

  #pushPublishers(): void {
    this.#native?.setPublishers([...this.#channels.keys()]);
  }

  /** GET /api/v3/srt (reference 5.13). */
  list(): SrtChannels {
    const out: SrtChannels = { publisher: {}, subscriber: {}, connections: {}, log: this.#events.global() };
    for (const ch of this.#channels.values()) {
      out.publisher[ch.name] = ch.publisher;
      out.subscriber[ch.name] = [...ch.subscribers.keys()];
      for (const sock of [ch.publisher, ...ch.subscribers.keys()]) {
        out.connections[String(sock)] = { log: this.#events.of(sock), stats: toSrtStatistics(this.#native?.stats(sock) ?? null) };
      }
    }
    return out;
  }

  /** Tracks per stream, for logs and tests. */
  tracks(name: string): readonly { pid: number; codec: string }[] {
    return this.#channels.get(name)?.tracks ?? [];
  }

  /** Ends every connection (fires the end hooks) and ignores the addon from now on. */
  close(): void {
    for (const sock of [...this.#peers.keys()]) {
      const peer = this.#peers.get(sock);
      if (peer?.mode === 'publish') this.#end(sock, 'server stopping');
    }
    for (const sock of [...this.#peers.keys()]) this.#end(sock, 'server stopping');
    this.#closed = true;
  }
}

/** The streamid's parts for a log line, never the token. */
function describe(streamid: string): Record<string, string> {
  const p = parseStreamId(streamid);
  return p.ok ? { stream: p.id.resource, mode: p.id.mode } : { streamid: streamid.replace(/(token[:=])[^,]*/g, '$1***') };
}
