import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import {
  addressKey, ApiError, IngestPeerBase, refusalCode, type ChildrenService, type IngestRefusal, type StreamAudience, type StreamPublisher, type StreamTable,
} from '../../sdk/index.ts';
import { Feeds } from './feeds.ts';
import { HostLink } from './host-link.ts';
import type { IamAccess } from '../iam/api.ts';
import type { FromHost } from './host/protocol.ts';
import type { WebrtcConfig } from './schema.ts';
import { startIngest } from './whip.ts';

type Answered = Extract<FromHost, { t: 'answered' }>;

/** Who asked, as the route knows it. */
/** A caller: its address, the token it gave, and `key` when that is a user's key `webrtc.token` did not match (the table decides it). */
/** The service's own address: its processes' sessions count toward the total only. */
const SELF: ReadonlySet<string> = new Set(['127.0.0.1', addressKey('::1')]);
/** The address of a caller's `host:port` (`[v6]:port`). */
const hostOf = (remote: string) => (remote.startsWith('[') ? remote.slice(1, remote.indexOf(']')) : remote.slice(0, remote.lastIndexOf(':')));

export interface Caller { remote: string; token?: string; key?: string; params: Record<string, string> }

/** One WebRTC session: a viewer (WHEP) or a publisher (WHIP), an ingest peer for the hooks and sessions. */
class WebrtcPeer extends IngestPeerBase {
  readonly kind: 'whep' | 'whip';
  readonly since = Date.now();
  rx = 0;
  tx = 0;
  connected = false;
  /** Its media connected once: the table was told (`announce`), the end hook fires with the end. */
  told = false;
  publisher?: StreamPublisher<'mpegts'>;
  /** A viewer's admission by the table (its hooks; the feed reads for every viewer). */
  audience?: StreamAudience;
  ingest?: ChildProcess;

  constructor(kind: 'whep' | 'whip', stream: string, c: Caller) {
    super({ ...c, id: `webrtc-${randomBytes(12).toString('hex')}`, protocol: 'webrtc', stream });
    this.kind = kind;
  }

  traffic() {
    return { rxBytes: this.rx, txBytes: this.tx };
  }
}

/**
 * The settings the host process, the feeds and the ingests take at their start (ICE, ports,
 * bounds, audio, the ffmpeg binary): a reload that changes none keeps the service and its
 * sessions (`ctx.keep`); `token` and `max_publishers` are re-bound.
 */
export function hostSettings(cfg: WebrtcConfig, ffmpeg: string): Record<string, unknown> {
  const { enable: _e, token: _t, max_publishers: _m, ...rest } = cfg;
  return { ...rest, ffmpeg };
}

/** One session as `GET /api/v3/webrtc` lists it. */
export interface SessionView { id: string; kind: 'whep' | 'whip'; stream: string; remote: string; since: number; connected: boolean; rx_bytes: number; tx_bytes: number }

const refused = (r: IngestRefusal) => new ApiError(refusalCode(r, 'http'), r.reason, [r.reason], 'WEBRTC_REFUSED');

export interface WebrtcDeps {
  children: ChildrenService; ffmpeg: string; log: Logger; streams: StreamTable;
}

/**
 * WebRTC sessions of the service: WHEP viewers of any stream of the stream table (through its feed)
 * and WHIP publishers into it (through an ingest ffmpeg), with the ingest hooks (tokens, rules,
 * sessions) as for RTMP and SRT. libdatachannel runs in the host process (host-link.ts).
 */
export class WebrtcService {
  #cfg: WebrtcConfig;
  #d: WebrtcDeps;
  readonly link: HostLink;
  readonly #feeds: Feeds;
  readonly #peers = new Map<string, WebrtcPeer>();
  /** Offers between the room check and their entry in `#peers` (the table's checks may wait): they hold a place. */
  readonly #entering = { whep: 0, whip: 0 };
  /** Offers being admitted, by client key (an IPv6 /64): they count against the per-address bound. */
  readonly #enteringBy = new Map<string, number>();

  constructor(cfg: WebrtcConfig, d: WebrtcDeps) {
    this.#cfg = cfg;
    this.#d = d;
    this.link = new HostLink(d.children, d.log, {
      bindAddress: cfg.bind_address, portMin: cfg.udp_port_min, portMax: cfg.udp_port_max, iceServers: cfg.ice_servers,
      publicAddresses: cfg.public_addresses, connectMs: cfg.connect_timeout_seconds * 1000, maxSessions: cfg.max_sessions,
    }, {
      state: (id, state) => this.#state(id, state),
      traffic: (rows) => { for (const [id, rx, tx] of rows) { const p = this.#peers.get(id); if (p) { p.rx = rx; p.tx = tx; } } },
      lost: () => { for (const id of [...this.#peers.keys()]) this.#closed(id); this.#feeds.lost(); },
    }, { idleMs: cfg.host_idle_seconds * 1000, busy: () => this.#peers.size > 0 || this.#feeds.size > 0 });
    this.#feeds = new Feeds({
      streams: d.streams, children: d.children, ffmpeg: d.ffmpeg, link: this.link, log: d.log, audioKbit: cfg.audio_bitrate_kbit,
      ended: (name) => { for (const p of this.#peers.values()) if (p.kind === 'whep' && p.stream === name) this.end(p.id); },
    });
  }

  start(): Promise<void> {
    return this.link.start();
  }

  /** A reload kept the service: the next app's settings (token, max_publishers) and logger (the table has its hooks). */
  rebind(cfg: WebrtcConfig, d: Pick<WebrtcDeps, 'log'>): void {
    this.#cfg = cfg;
    this.#d = { ...this.#d, ...d };
  }

  /**
   * Once every plugin of the app is mounted: a session the token now refuses ends; the others are
   * announced to the current hooks (`onPlay` / `onPublish`), their bytes counted from now on.
   */
  announce(): void {
    const token = this.#cfg.token;
    for (const p of [...this.#peers.values()]) {
      if (token !== '' && p.token !== token && (p.key === undefined || this.#d.streams.keyRefusal(p, p.kind === 'whep' ? 'play' : 'publish'))) {
        this.#d.log.warn({ id: p.id, stream: p.stream, remote: p.remote, protocol: 'webrtc' }, 'webrtc session ended: its token is not webrtc.token any more');
        this.end(p.id);
        continue;
      }
      if (!p.told) continue;
      (p.publisher ?? p.audience)?.announce();
    }
  }

  /**
   * A user's key, decided as the stream table's admission will (`keyRefusal`): the routes answer
   * it before they read the offer. Undefined when allowed.
   */
  keyRefusal(stream: string, mode: 'play' | 'publish', c: Caller): IngestRefusal | undefined {
    return this.#d.streams.keyRefusal({ id: 'webrtc-offer', protocol: 'webrtc', stream, ...c, traffic: () => ({ rxBytes: 0, txBytes: 0 }) }, mode);
  }

  #state(id: string, state: 'connected' | 'closed'): void {
    const p = this.#peers.get(id);
    if (!p) return;
    if (state === 'closed') { this.#closed(id); return; }
    p.connected = true;
    if (p.told) return;
    p.told = true;
    // the hooks are the table's, for publishers and viewers alike (announced once the media connects)
    (p.publisher ?? p.audience)?.announce();
  }

  /** A session is gone (ended here or in the host): its feed hold, ingest and stream go with it. */
  #closed(id: string): void {
    const p = this.#peers.get(id);
    if (!p) return;
    this.#peers.delete(id);
    if (p.kind === 'whep') this.#feeds.release(p.stream);
    if (p.ingest && p.ingest.exitCode === null && p.ingest.signalCode === null) p.ingest.kill('SIGKILL');
    // the table tells the end hook (when the media had connected)
    p.publisher?.end();
    p.audience?.leave();
    this.link.idleCheck();
  }

  /**
   * A place for one more session of `kind`, held from now until `release` (the peer entered
   * `#peers` or was refused): offers that wait on the table's checks at once count against the limits.
   */
  #enter(kind: 'whep' | 'whip', remote: string): () => void {
    const { whep, whip } = this.#entering;
    if (this.#peers.size + whep + whip >= this.#cfg.max_sessions) throw new ApiError(503, 'Too many WebRTC sessions', [`at most ${this.#cfg.max_sessions} (webrtc.max_sessions)`], 'WEBRTC_LIMIT');
    // one client may not take every place (the service's own address counts toward the total only)
    const key = addressKey(hostOf(remote));
    if (!SELF.has(key)) {
      let mine = this.#enteringBy.get(key) ?? 0;
      for (const p of this.#peers.values()) if (addressKey(hostOf(p.remote)) === key) mine++;
      const most = this.#cfg.max_sessions_per_address;
      if (mine >= most) throw new ApiError(429, 'Too many WebRTC sessions from one address', [`at most ${most} from ${key} (webrtc.max_sessions_per_address)`], 'WEBRTC_LIMIT');
    }
    if (kind === 'whip') {
      let publishers = whip;
      for (const p of this.#peers.values()) if (p.kind === 'whip') publishers++;
      if (publishers >= this.#cfg.max_publishers) throw new ApiError(503, 'Too many WHIP publishers', [`at most ${this.#cfg.max_publishers} (webrtc.max_publishers)`], 'WEBRTC_LIMIT');
    }
    this.#entering[kind]++;
    this.#enteringBy.set(key, (this.#enteringBy.get(key) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.#entering[kind]--;
      const n = (this.#enteringBy.get(key) ?? 1) - 1;
      if (n > 0) this.#enteringBy.set(key, n);
      else this.#enteringBy.delete(key);
    };
  }

  /** WHEP: the answer to a viewer's offer for `stream`, and its session id. */
  async play(stream: string, offer: string, c: Caller): Promise<{ id: string; sdp: string }> {
    const release = this.#enter('whep', c.remote);
    const p = new WebrtcPeer('whep', stream, c);
    let a;
    try {
      // the table admits (prePlay); onPlay waits for the media to connect
      a = await this.#d.streams.admit(p, { announce: 'later' });
      if (!a.ok) throw refused(a);
      p.audience = a.handle;
      this.#peers.set(p.id, p);
    } finally {
      release();
    }
    if (!(await this.#feeds.acquire(stream, c.remote))) {
      this.#peers.delete(p.id);
      a.handle.leave();
      throw new ApiError(404, 'Stream not found', [`nothing publishes '${stream}'`], 'STREAM_NOT_FOUND');
    }
    const m = await this.#answer(p, this.link.ask({ t: 'play', id: p.id, feed: stream, offer }));
    return { id: p.id, sdp: m.sdp };
  }

  /** WHIP: the answer to a publisher's offer for `stream`; its media is published into the stream table. */
  async publish(stream: string, offer: string, c: Caller): Promise<{ id: string; sdp: string }> {
    const release = this.#enter('whip', c.remote);
    const p = new WebrtcPeer('whip', stream, c);
    let r;
    try {
      // the table admits (prePublish, "name busy"); onPublish waits for the media to connect
      r = await this.#d.streams.publish(stream, 'mpegts', p, { announce: 'later' });
      if (!r.ok) throw refused(r);
      p.publisher = r.handle;
      this.#peers.set(p.id, p);
    } finally {
      release();
    }
    const m = await this.#answer(p, this.link.ask({ t: 'publish', id: p.id, offer }));
    if (!m.video) { this.end(p.id); throw new ApiError(406, 'The offer sends no video', ['no video'], 'WEBRTC_OFFER'); }
    try {
      const ing = await startIngest(this.#d.children, this.#d.ffmpeg, m.video, m.audio, r.handle);
      p.ingest = ing.child;
      ing.child.on('exit', () => { if (this.#peers.has(p.id)) this.end(p.id); });
      this.link.send({ t: 'sink', id: p.id, video: ing.video, audio: ing.audio });
    } catch (err) {
      this.end(p.id);
      throw new ApiError(503, 'WHIP ingest could not start', [(err as Error).message], 'WEBRTC_INGEST');
    }
    return { id: p.id, sdp: m.sdp };
  }

  /** The host's answer to an offer; a refusal or a host that is down becomes the route's error. */
  async #answer(p: WebrtcPeer, pending: ReturnType<HostLink['ask']>): Promise<Answered> {
    let m;
    try {
      m = await pending;
    } catch (err) {
      this.#closed(p.id);
      throw new ApiError(503, 'WebRTC is not available', [(err as Error).message], 'WEBRTC_UNAVAILABLE');
    }
    if (m.t === 'refused') {
      this.#closed(p.id);
      throw new ApiError(m.refusal.status, m.refusal.message, [m.refusal.message], 'WEBRTC_OFFER');
    }
    if (m.t !== 'answered') { this.#closed(p.id); throw new ApiError(503, 'WebRTC is not available', ['unexpected answer'], 'WEBRTC_UNAVAILABLE'); }
    return m;
  }

  /** Whether session `id` was made with `token` (a user's key may end only its own sessions). */
  madeWith(id: string, token: string): boolean {
    const p = this.#peers.get(id);
    return p !== undefined && p.token === token;
  }

  /** DELETE of a session: false when there is none. */
  end(id: string): boolean {
    if (!this.#peers.has(id)) return false;
    this.link.send({ t: 'close', id });
    this.#closed(id);
    return true;
  }

  /** Whether a stream is readable now or would be published on demand (the player page). */
  readable(stream: string): boolean {
    const s = this.#d.streams;
    return s.get(stream) !== undefined || s.demandNames().includes(stream) || s.demandNames('running').includes(stream) || this.#feeds.has(stream);
  }

  list(): SessionView[] {
    return [...this.#peers.values()].map((p) => ({
      id: p.id, kind: p.kind, stream: p.stream, remote: p.remote, since: p.since, connected: p.connected, rx_bytes: p.rx, tx_bytes: p.tx,
    }));
  }

  async close(): Promise<void> {
    for (const id of [...this.#peers.keys()]) this.#closed(id);
    this.#feeds.close();
    await this.link.close();
  }
}
