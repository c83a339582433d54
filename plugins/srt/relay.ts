import { refusalCode, type IngestRefusal } from '../../sdk/ingest.ts';
import { deliverChunk } from './channel.ts';
import { SrtPeer } from './peer.ts';
import { parseStreamId } from './streamid.ts';
import { rejectName } from './reject.ts';
import { toSrtStatistics, type SrtStatistics } from './stats.ts';
import type { SrtEventType, SrtNativeSocket } from './native.ts';
import type { EventsLog, TopicLog } from './events-log.ts';
import { RefusalLog, hostOf, type SrtLog } from './refusal-log.ts';
import { MediaWatch } from './media-watch.ts';

export interface RelayOptions {
  log: SrtLog;
  token: string;
  /** A token `<user>:<token>` other than `token` goes on to the service, which asks IAM (the iam plugin runs). */
  userKeys?: boolean;
  events: EventsLog;
  /** `srt.handshake_timeout_seconds` in ms: for a publisher's first media (the table's checks take it too, host.ts). */
  handshakeMs: number;
  /** `srt.idle_timeout_seconds` in ms: a publisher without media for as long is closed. */
  idleMs: number;
  /** The service's stream table, as the host reaches it. */
  table: RelayTable;
  /** The `<mode> <resource>` a child's run token admits (run-scope.ts), undefined for another token. */
  runs?(token: string): ReadonlySet<string> | undefined;
}

/**
 * The service's stream table as the relay uses it (over IPC in the host, host/entry.ts). The
 * table admits (the ingest hooks, "name busy", "not found", the on-demand wait), starts readers
 * right and fans out; the relay sends.
 */
export interface RelayTable {
  /** Publish (`publish`) or read (`request`) the peer's stream; a refusal, or undefined when it was taken. */
  claim(peer: SrtPeer): Promise<IngestRefusal | undefined>;
  /** A publisher's chunk, for the table. */
  media(sock: number, chunk: Buffer): void;
  /** A peer whose claim was asked ended (a claim under way then takes nothing; a taken one ends with its traffic). */
  release(peer: SrtPeer): void;
}

/** How often publishers are checked for media (the idle and first-media timeouts, the liveness probe). */
const SWEEP_MS = 250;

export interface SrtChannels {
  publisher: Record<string, number>;
  subscriber: Record<string, number[]>;
  connections: Record<string, { log: TopicLog; stats: SrtStatistics }>;
  log: TopicLog;
}

/**
 * The SRT server's logic over the addon's events: streamid parsing, claims on the service's
 * stream table (which admits: the ingest hooks, one publisher per name, readers of any protocol's streams), sending
 * the table's chunks to subscribers, timeouts, and this host's part of the listing. No sockets
 * here: `native` does the I/O; no stream table either: the service's (`RelayTable`).
 */
export class SrtRelay {
  #native: SrtNativeSocket | undefined;
  #peers = new Map<number, SrtPeer>();
  #table: RelayTable;
  #log: SrtLog;
  #token: string;
  #userKeys: boolean;
  #runs: (token: string) => ReadonlySet<string> | undefined;
  #closed = false;
  #events: EventsLog;
  #refusals: RefusalLog;
  /** The publishers' media timeouts and liveness probes. */
  #media: MediaWatch;
  #sweep: NodeJS.Timeout;

  constructor(opts: RelayOptions) {
    this.#log = opts.log;
    this.#events = opts.events;
    this.#token = opts.token;
    this.#userKeys = opts.userKeys === true;
    this.#runs = opts.runs ?? (() => undefined);
    this.#refusals = new RefusalLog(opts.log);
    this.#table = opts.table;
    this.#media = new MediaWatch({
      handshakeMs: opts.handshakeMs, idleMs: opts.idleMs,
      send: (sock, data) => this.#native?.send(sock, data) ?? 0, stats: (sock) => this.#native?.stats(sock) ?? null,
    });
    this.#sweep = setInterval(() => this.#sweepMedia(), SWEEP_MS).unref();
  }

  attach(native: SrtNativeSocket): void {
    this.#native = native;
  }

  /**
   * The addon's event callback, and the fault boundary: whatever one connection's event throws
   * (a parser, a hook, a bug) ends that connection with a log line naming its peer, never the
   * process. No closure per event: media events are the hot path.
   */
  readonly onEvent = (type: SrtEventType, sock: number, text: string, extra: string | Buffer, code: number, why = ''): void => {
    if (this.#closed) return;
    try {
      if (type === 'data') this.#data(sock, extra as Buffer);
      else if (type === 'accept') this.#accept(sock, text, extra as string).catch((err: unknown) => this.#failed(sock, extra as string, err));
      else if (type === 'close') this.#end(sock, text);
      else this.#rejected(text, extra as string, code, why);
    } catch (err) {
      this.#failed(sock, type === 'data' ? '' : String(extra), err);
    }
  };

  #failed(sock: number, remote: string, err: unknown): void {
    const peer = remote || this.#peers.get(sock)?.remote || '(unknown)';
    this.#log.error({ peer, id: sock >= 0 ? `srt-${sock}` : undefined, err }, 'SRT connection failed: closed');
    if (sock < 0) return;
    try {
      this.#native?.close(sock);
      this.#end(sock, `failed: ${(err as Error)?.message ?? String(err)}`);
    } catch (again) {
      this.#log.error({ peer, err: again }, 'SRT connection could not be closed cleanly');
      this.#peers.delete(sock);
    }
  }

  #rejected(streamid: string, peer: string, code: number, why: string): void {
    const parts = describe(streamid);
    const reason = why ? `${rejectName(code)}: ${why}` : rejectName(code);
    this.#refusals.warn(hostOf(peer), { peer, ...parts, reason }, 'SRT connection refused in the handshake');
    this.#events.add('handshake:reject', `${reason}: ${parts.stream ?? '(no resource)'} from ${peer}`);
  }

  #data(sock: number, data: Buffer): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    peer.received += data.length;
    if (peer.claimed && peer.mode === 'publish') this.#table.media(sock, data);
  }

  /**
   * A chunk of the stream table for some subscribers (one Buffer for all). A subscriber whose send
   * buffer stays full for MAX_STALLS chunks is closed; a send that throws ends that subscriber only.
   */
  deliver(socks: readonly number[], chunk: Buffer): void {
    if (this.#closed) return;
    const send = (s: number, d: Buffer) => this.#native?.send(s, d) ?? 0;
    for (const sock of socks) {
      const peer = this.#peers.get(sock);
      if (!peer?.claimed || peer.mode === 'publish') continue;
      try {
        if (deliverChunk(peer, chunk, send)) queueMicrotask(() => this.kick(sock, 'too slow: its send buffer stayed full'));
      } catch (err) {
        this.#failed(sock, peer.remote, err);
      }
    }
  }

  async #accept(sock: number, streamid: string, remote: string): Promise<void> {
    // SRT v4 callers send no streamid: a publisher named after its address, as Core does
    const parsed = streamid === '' ? { ok: true as const, id: { resource: remote, mode: 'publish' as const, params: {} } } : parseStreamId(streamid);
    if (!parsed.ok) return this.#refuse(sock, remote, undefined, parsed.reason);
    const { resource, mode, token, params } = parsed.id;
    // srt.token, or a child's run token for what its command names (the addon checked both already)
    const run = token === undefined ? undefined : this.#runs(token);
    if (run && !run.has(`${mode} ${resource}`)) return this.#refuse(sock, remote, resource, 'FORBIDDEN: the run\'s credential does not name this stream');
    if (!run && this.#token && token !== this.#token && !(this.#userKeys && token?.includes(':'))) return this.#refuse(sock, remote, resource, 'UNAUTHORIZED: wrong or missing token');
    const peer = new SrtPeer(sock, resource, mode, remote, token, params);
    this.#peers.set(sock, peer);
    // the table admits: the ingest hooks, one publisher per name, readers only of live names (any protocol's)
    const taken = await this.#table.claim(peer);
    if (!this.#peers.has(sock)) {
      if (!taken) this.#table.release(peer);
      return;
    }
    if (taken) return this.#refuse(sock, remote, resource, `${rejectName(refusalCode(taken, 'srt'))}: ${taken.reason}`);
    peer.claimed = true;
    if (mode === 'publish') {
      this.#media.add(sock);
      this.#events.add('connection:new', `publish ${resource} from ${remote}`, sock);
      this.#log.info({ id: peer.id, stream: resource, peer: remote }, 'SRT publisher started');
    } else {
      this.#events.add('connection:new', `request ${resource} from ${remote}`, sock);
      this.#log.info({ id: peer.id, stream: resource, peer: remote }, 'SRT subscriber started');
    }
  }

  #sweepMedia(): void {
    try {
      this.#checkMedia(Date.now());
    } catch (err) {
      this.#failed(-1, '', err);
    }
  }

  /**
   * Publishers without a first media packet within the handshake timeout, without media for the
   * idle timeout, or quiet and not answering the liveness probe (media-watch.ts) are closed: their
   * stream ends and its readers with it (libsrt's peer idle timeout only sees silence, not keep-alives).
   */
  #checkMedia(now: number): void {
    const received = (sock: number) => this.#peers.get(sock)?.received;
    for (const { sock, why } of this.#media.check(now, received)) {
      const peer = this.#peers.get(sock)!;
      this.#log.warn({ id: peer.id, stream: peer.stream, peer: peer.remote, why }, 'SRT publisher closed');
      this.#native?.close(sock);
      this.#end(sock, why);
    }
  }

  /** Closes a subscriber (too slow, or the table stopped serving it). */
  kick(sock: number, why: string): void {
    if (!this.#peers.has(sock)) return;
    this.#log.warn({ id: `srt-${sock}`, why }, 'SRT subscriber closed');
    this.#native?.close(sock);
    this.#end(sock, why);
  }

  #refuse(sock: number, remote: string, stream: string | undefined, reason: string): void {
    this.#refusals.warn(hostOf(remote), { peer: remote, stream: stream ?? '(no resource)', reason }, 'SRT connection refused');
    this.#events.add('connection:refuse', `${reason}: ${stream ?? '(no resource)'} from ${remote}`);
    this.#peers.delete(sock);
    this.#native?.close(sock);
  }

  /**
   * A connection ended (closed, broken, or closed by us): the table ends its stream or its reading
   * (and tells the end hooks), or drops its claim under way.
   */
  #end(sock: number, why: string): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    this.#peers.delete(sock);
    this.#media.delete(sock);
    this.#table.release(peer);
    this.#log.info({ id: peer.id, stream: peer.stream, why, ...peer.traffic(), dropped: peer.dropped }, `SRT ${peer.mode === 'publish' ? 'publisher' : 'subscriber'} ended`);
    this.#events.add('connection:close', `${peer.mode} ${peer.stream}: ${why}`, sock);
    this.#events.forget(sock);
  }

  /**
   * This host's part of GET /api/v3/srt (reference 5.13): its claimed publishers and subscribers,
   * each connection's log and statistics, and the global log. The service lists the streams from
   * its table and takes the connections from here.
   */
  list(): SrtChannels {
    const out: SrtChannels = { publisher: {}, subscriber: {}, connections: {}, log: this.#events.global() };
    for (const [sock, peer] of this.#peers) {
      if (!peer.claimed) continue;
      if (peer.mode === 'publish') out.publisher[peer.stream] = sock;
      else (out.subscriber[peer.stream] ??= []).push(sock);
      out.connections[String(sock)] = { log: this.#events.of(sock), stats: toSrtStatistics(this.#native?.stats(sock) ?? null) };
    }
    return out;
  }

  /** Ends every connection (the table fires the end hooks) and ignores the addon from now on. */
  close(): void {
    for (const sock of [...this.#peers.keys()]) {
      const peer = this.#peers.get(sock);
      if (peer?.mode === 'publish') this.#end(sock, 'server stopping');
    }
    for (const sock of [...this.#peers.keys()]) this.#end(sock, 'server stopping');
    this.#closed = true;
    clearInterval(this.#sweep);
  }
}

/** The streamid's parts for a log line, never the token. */
function describe(streamid: string): Record<string, string> {
  const p = parseStreamId(streamid);
  return p.ok ? { stream: p.id.resource, mode: p.id.mode } : { streamid: streamid.replace(/(token[:=])[^,]*/g, '$1***') };
}
