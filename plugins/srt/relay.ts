import { refusalCode, type IngestRefusal } from '../../sdk/ingest.ts';
import { SrtPeer } from './peer.ts';
import { parseStreamId } from './streamid.ts';
import { rejectName } from './reject.ts';
import { toSrtStatistics, type SrtStatistics } from './stats.ts';
import type { SrtRawStats } from './native.ts';
import type { EventsLog, TopicLog } from './events-log.ts';
import { RefusalLog, hostOf, type SrtLog } from './refusal-log.ts';

export interface RelayOptions {
  log: SrtLog;
  token: string;
  /** A token `<user>:<token>` other than `token` goes on to the stream table, which asks IAM (the iam plugin runs). */
  userKeys?: boolean;
  events: EventsLog;
  /** The service's stream table. */
  table: RelayTable;
  /** What the relay asks of the host's sockets (host/host.ts sends it over the pipe). */
  sockets: RelaySockets;
  /** The `<mode> <resource>` a child's run token admits (run-scope.ts), undefined for another token. */
  runs?(token: string): ReadonlySet<string> | undefined;
}

/**
 * The service's stream table as the relay uses it (host/table-link.ts). The table admits (the
 * ingest hooks, "name busy", "not found", the on-demand wait), starts readers right and fans out.
 */
export interface RelayTable {
  /** Publish (`publish`) or read (`request`) the peer's stream; a refusal, or undefined when it was taken. */
  claim(peer: SrtPeer): Promise<IngestRefusal | undefined>;
  /** A publisher's chunk, for the table. */
  media(sock: number, chunk: Buffer): void;
  /** A peer whose claim was asked ended (a claim under way then takes nothing; a taken one ends with its traffic). */
  release(peer: SrtPeer): void;
}

/** The host's sockets, as the relay drives them. */
export interface RelaySockets {
  close(sock: number): void;
  /** A claimed publisher: the host closes it without first media, without media, or gone (its media watch). */
  watch(sock: number): void;
}

export interface SrtChannels {
  publisher: Record<string, number>;
  subscriber: Record<string, number[]>;
  connections: Record<string, { log: TopicLog; stats: SrtStatistics }>;
  log: TopicLog;
}

/**
 * The SRT server's logic over the host's events: streamid parsing, claims on the service's
 * stream table (which admits: the ingest hooks, one publisher per name, readers of any
 * protocol's streams), the connection log and the relay's part of the listing. No sockets here:
 * the host program does the I/O, the handshake's early refusals, the sends and the media watch.
 */
export class SrtRelay {
  #peers = new Map<number, SrtPeer>();
  #table: RelayTable;
  #sockets: RelaySockets;
  #log: SrtLog;
  #token: string;
  #userKeys: boolean;
  #runs: (token: string) => ReadonlySet<string> | undefined;
  #events: EventsLog;
  #refusals: RefusalLog;

  constructor(opts: RelayOptions) {
    this.#log = opts.log;
    this.#events = opts.events;
    this.#token = opts.token;
    this.#userKeys = opts.userKeys === true;
    this.#runs = opts.runs ?? (() => undefined);
    this.#refusals = new RefusalLog(opts.log);
    this.#table = opts.table;
    this.#sockets = opts.sockets;
  }

  /** A connection passed the handshake: claimed in the table, or refused (closed) with a log line. */
  accepted(sock: number, streamid: string, remote: string): void {
    // the host is checked, not trusted: a second accept of a live socket is not a new connection
    if (this.#peers.has(sock)) return;
    this.#accept(sock, streamid, remote).catch((err: unknown) => this.#failed(sock, remote, err));
  }

  /** A publisher's bytes: counted, and into the table once it is claimed. */
  data(sock: number, chunk: Buffer): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    peer.received += chunk.length;
    if (!peer.claimed || peer.mode !== 'publish') return;
    try {
      this.#table.media(sock, chunk);
    } catch (err) {
      this.#failed(sock, peer.remote, err);
    }
  }

  /** A connection ended in the host: by its peer, or closed by the host (`byHost`: its media watch, too slow). */
  closed(sock: number, why: string, byHost: boolean, sent: number, dropped: number): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    peer.sent = sent;
    peer.dropped = dropped;
    if (byHost) this.#log.warn({ id: peer.id, stream: peer.stream, peer: peer.remote, why }, `SRT ${peer.mode === 'publish' ? 'publisher' : 'subscriber'} closed`);
    try {
      this.#end(sock, why);
    } catch (err) {
      this.#failed(sock, peer.remote, err);
    }
  }

  /** What the host sent to its subscribers so far. */
  traffic(sock: number, sent: number, dropped: number): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    peer.sent = sent;
    peer.dropped = dropped;
  }

  /** A connection the handshake refused (the host checked token, names, caps and keys). */
  rejected(streamid: string, peer: string, code: number, why: string): void {
    const parts = describe(streamid);
    const reason = why ? `${rejectName(code)}: ${why}` : rejectName(code);
    this.#refusals.warn(hostOf(peer), { peer, ...parts, reason }, 'SRT connection refused in the handshake');
    this.#events.add('handshake:reject', `${reason}: ${parts.stream ?? '(no resource)'} from ${peer}`);
  }

  /**
   * The fault boundary: whatever one connection's event threw (a parser, a hook, a bug) ends that
   * connection with a log line naming its peer, never the service (the events that reach the
   * table catch their own; this is for the rest of the host's frames).
   */
  fail(sock: number, err: unknown): void {
    this.#failed(sock, '', err);
  }

  #failed(sock: number, remote: string, err: unknown): void {
    const peer = remote || this.#peers.get(sock)?.remote || '(unknown)';
    this.#log.error({ peer, id: `srt-${sock}`, err }, 'SRT connection failed: closed');
    this.#sockets.close(sock);
    try {
      this.#end(sock, `failed: ${(err as Error)?.message ?? String(err)}`);
    } catch (again) {
      this.#log.error({ peer, err: again }, 'SRT connection could not be closed cleanly');
      this.#peers.delete(sock);
    }
  }

  async #accept(sock: number, streamid: string, remote: string): Promise<void> {
    // SRT v4 callers send no streamid: a publisher named after its address, as Core does
    const parsed = streamid === '' ? { ok: true as const, id: { resource: remote, mode: 'publish' as const, params: {} } } : parseStreamId(streamid);
    if (!parsed.ok) return this.#refuse(sock, remote, undefined, parsed.reason);
    const { resource, mode, token, params } = parsed.id;
    // srt.token, or a child's run token for what its command names (the host checked both already)
    const run = token === undefined ? undefined : this.#runs(token);
    if (run && !run.has(`${mode} ${resource}`)) return this.#refuse(sock, remote, resource, 'FORBIDDEN: the run\'s credential does not name this stream');
    const userKey = !run && this.#userKeys && token !== this.#token && token?.includes(':') === true;
    if (!run && this.#token && token !== this.#token && !userKey) return this.#refuse(sock, remote, resource, 'UNAUTHORIZED: wrong or missing token');
    // a user's key is the stream table's to decide (an access plugin's `decideKey`)
    const peer = new SrtPeer(sock, resource, mode, remote, token, params, userKey && this.#token !== '' ? token : undefined);
    this.#peers.set(sock, peer);
    const taken = await this.#table.claim(peer);
    if (this.#peers.get(sock) !== peer) {
      if (!taken) this.#table.release(peer);
      return;
    }
    if (taken) return this.#refuse(sock, remote, resource, `${rejectName(refusalCode(taken, 'srt'))}: ${taken.reason}`);
    peer.claimed = true;
    if (mode === 'publish') this.#sockets.watch(sock);
    this.#events.add('connection:new', `${mode} ${resource} from ${remote}`, sock);
    this.#log.info({ id: peer.id, stream: resource, peer: remote }, `SRT ${mode === 'publish' ? 'publisher' : 'subscriber'} started`);
  }

  /** Closes a subscriber (the table stopped serving it). */
  kick(sock: number, why: string): void {
    if (!this.#peers.has(sock)) return;
    this.#log.warn({ id: `srt-${sock}`, why }, 'SRT subscriber closed');
    this.#sockets.close(sock);
    this.#end(sock, why);
  }

  #refuse(sock: number, remote: string, stream: string | undefined, reason: string): void {
    this.#refusals.warn(hostOf(remote), { peer: remote, stream: stream ?? '(no resource)', reason }, 'SRT connection refused');
    this.#events.add('connection:refuse', `${reason}: ${stream ?? '(no resource)'} from ${remote}`);
    this.#peers.delete(sock);
    this.#sockets.close(sock);
  }

  /**
   * A connection ended (closed, broken, or closed by us): the table ends its stream or its reading
   * (and tells the end hooks), or drops its claim under way.
   */
  #end(sock: number, why: string): void {
    const peer = this.#peers.get(sock);
    if (!peer) return;
    this.#peers.delete(sock);
    this.#table.release(peer);
    this.#log.info({ id: peer.id, stream: peer.stream, why, ...peer.traffic(), dropped: peer.dropped }, `SRT ${peer.mode === 'publish' ? 'publisher' : 'subscriber'} ended`);
    this.#events.add('connection:close', `${peer.mode} ${peer.stream}: ${why}`, sock);
    this.#events.forget(sock);
  }

  /** The claimed connections' sockets (whose statistics the listing shows). */
  claimed(): number[] {
    return [...this.#peers.values()].filter((p) => p.claimed).map((p) => p.sock);
  }

  /**
   * The relay's part of GET /api/v3/srt (reference 5.13): its claimed publishers and subscribers,
   * each connection's log and statistics (`stats`, from the host), and the global log.
   */
  list(stats: Readonly<Record<string, SrtRawStats>>): SrtChannels {
    const out: SrtChannels = { publisher: {}, subscriber: {}, connections: {}, log: this.#events.global() };
    for (const [sock, peer] of this.#peers) {
      if (!peer.claimed) continue;
      if (peer.mode === 'publish') out.publisher[peer.stream] = sock;
      else (out.subscriber[peer.stream] ??= []).push(sock);
      out.connections[String(sock)] = { log: this.#events.of(sock), stats: toSrtStatistics(stats[String(sock)] ?? null) };
    }
    return out;
  }

  /** Ends every connection (publishers first; the table fires the end hooks): the host stops or ended. */
  endAll(why: string): void {
    const order = [...this.#peers.values()].sort((a, b) => Number(b.mode === 'publish') - Number(a.mode === 'publish'));
    for (const peer of order) this.#end(peer.sock, why);
  }
}

/** The streamid's parts for a log line, never the token. */
function describe(streamid: string): Record<string, string> {
  const p = parseStreamId(streamid);
  return p.ok ? { stream: p.id.resource, mode: p.id.mode } : { streamid: streamid.replace(/(token[:=])[^,]*/g, '$1***') };
}
