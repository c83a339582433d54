import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { endIpcChild, IngestPeerBase, streamName, type ChildrenService, type IngestTraffic, type StreamTable } from '../../../sdk/index.ts';
import type { SrtChannels } from '../relay.ts';
import type { ClaimMode, FromHost, HostOptions, PeerData, ToHost } from './protocol.ts';
import { HostStreams } from './table-link.ts';
import { PUBLISHED, readFrames } from './media-pipe.ts';
import type { SrtRun } from '../run-scope.ts';
import { siblingModule } from '../../../sdk/module-url.ts';

const ENTRY = fileURLToPath(siblingModule('./entry.ts', import.meta.url));
/** First wait before the host is started again after a fault; doubles up to the maximum. */
const RESTART_MS = 250;
const RESTART_MAX_MS = 10_000;
/** A host that ran this long before its fault starts the next time without delay build-up. */
const STABLE_MS = 30_000;
/** How long `list()` waits for the host before answering an empty listing. */
const LIST_MS = 2000;

/** An ingest peer of the host, as the stream table and its hook taps see it (traffic: the last count sent). */
class PeerProxy extends IngestPeerBase {
  counts: IngestTraffic;

  constructor(d: PeerData, key: string | undefined) {
    super({ ...d, protocol: 'srt', ...(key === undefined ? {} : { key }) });
    this.counts = d.traffic;
  }

  traffic(): IngestTraffic {
    return { ...this.counts };
  }
}

const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);
const EMPTY: SrtChannels = { publisher: {}, subscriber: {}, connections: {}, log: {} };

export interface SrtHostOptions {
  children: ChildrenService;
  log: Logger;
  /** The service's stream table: SRT publishes and reads there, admitted by it (the ingest hooks). */
  streams: StreamTable;
  opts: HostOptions;
}

/**
 * The service's side of the SRT host process: starts it, claims its connections' streams in the
 * stream table (which admits them: the ingest hooks) and carries their media
 * (the media pipe), writes its log lines into the service's log, and when it ends by a fault (a
 * crash inside libsrt), ends its connections' sessions and streams and starts it again on the same port.
 */
export class SrtHost {
  #o: SrtHostOptions;
  #child: ChildProcess | undefined;
  /** Peers whose claim was asked, by id: their traffic counts come from the host. */
  #peers = new Map<string, PeerProxy>();
  readonly #streams: HostStreams;
  readonly #unwatch: () => void;
  #lists = new Map<number, (v: SrtChannels) => void>();
  #seq = 0;
  #closed = false;
  #restartMs = RESTART_MS;
  #restartTimer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  /** Listened once: from then on a host that ends is started again. */
  #listened = false;
  /** The children's run credentials last pushed (a host started again gets them at once). */
  #runs: SrtRun[] = [];
  #users: Record<string, string> = {};
  /** `runs` pushes waiting for the host's `runsSet`. */
  #runAcks = new Map<number, () => void>();
  port = 0;

  constructor(o: SrtHostOptions) {
    this.#o = o;
    this.#streams = new HostStreams(o.streams, o.opts.handshakeMs, (sock, why) => this.#send({ t: 'kick', sock, why }), (f, m) => o.log.warn(f, m));
    // the addon refuses requests for names nothing publishes, and second publishers, in the handshake
    this.#unwatch = o.streams.onChange((names) => this.#names(names));
  }

  /**
   * The names the addon admits requests for and refuses publishers of: the live ones, and those an
   * on-demand process would publish once read; and the names it admits requests for only: those of
   * on-demand processes a demand started, not live yet (its own SRT publisher must pass, and a
   * second player that comes meanwhile waits for it as the first does).
   */
  #names(live: readonly string[] = this.#o.streams.list().map((s) => s.name)): void {
    const names = new Set([...live, ...this.#o.streams.demandNames()]);
    const readable = this.#o.streams.demandNames('running').filter((n) => !names.has(n));
    // an SRT resource may be written with a leading '/': both spellings name the table's stream
    const both = (list: Iterable<string>) => [...list].flatMap((n) => [n, `/${n}`]);
    this.#send({ t: 'names', names: both(names), readable: both(readable) });
  }

  /** Starts the host; resolves with the bound port, rejects with the addon or bind failure. */
  start(): Promise<{ port: number; libsrt: string }> {
    return new Promise((resolve, reject) => this.#spawn((m) => {
      if (m.t === 'listening') resolve(m);
      else reject(Object.assign(new Error(m.message), { stage: m.stage }));
    }));
  }

  #spawn(first: (m: Extract<FromHost, { t: 'listening' | 'failed' }>) => void): void {
    // --expose-gc: the host collects once connections left, to give their memory back (entry.ts)
    const child = this.#o.children.spawn(process.execPath, ['--expose-gc', ENTRY], { stdio: ['ignore', 'ignore', 'pipe', 'ipc', 'pipe'] });
    this.#child = child;
    const pipe = child.stdio[4] as Socket | null;
    if (pipe) {
      pipe.on('error', () => {});
      readFrames(pipe, (kind, socks, chunk) => { if (kind === PUBLISHED && socks[0] !== undefined) this.#streams.published(socks[0], chunk); },
        (why) => this.#o.log.error({ why }, 'the SRT host media pipe broke'));
    }
    this.#streams.attach(pipe ?? undefined);
    this.#startedAt = Date.now();
    let stderr = '';
    let settled = false;
    child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
    child.on('message', (m: FromHost) => {
      if (!settled && (m.t === 'listening' || m.t === 'failed')) {
        settled = true;
        if (m.t === 'listening') {
          this.port = m.port;
          this.#o.opts.port = m.port;
          this.#listened = true;
          this.#names();
          this.#send({ t: 'runs', seq: 0, runs: this.#runs });
          this.#send({ t: 'users', users: this.#users });
        }
        first(m);
        return;
      }
      this.#message(m);
    });
    child.on('error', (err) => {
      if (!settled) { settled = true; first({ t: 'failed', stage: 'addon', message: `cannot start the SRT host: ${err.message}` }); }
    });
    child.on('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      if (!settled) { settled = true; first({ t: 'failed', stage: 'addon', message: `the SRT host ended at start (${signal ?? code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}` }); }
      // a first start that fails is the boot's error (start() rejects); later ones are tried again
      if (this.#listened) this.#ended(code, signal, stderr);
    });
    child.send({ t: 'start', opts: this.#o.opts } satisfies ToHost);
  }

  #message(m: FromHost): void {
    // the host is a child like any other: what it sends is checked, not trusted
    if (m.t === 'log') this.#o.log[LEVELS.has(m.level) ? m.level : 'warn'](m.fields ?? {}, String(m.msg));
    else if (m.t === 'traffic') for (const [id, rx, tx] of m.rows) { const p = this.#peers.get(id); if (p) p.counts = { rxBytes: rx, txBytes: tx }; }
    else if (m.t === 'listed') { this.#lists.get(m.seq)?.(m.value); this.#lists.delete(m.seq); }
    else if (m.t === 'claim') void this.#claim(m.seq, m.mode, m.sock, m.peer);
    else if (m.t === 'release') this.#release(m.id, m.traffic);
    else if (m.t === 'runsSet') { this.#runAcks.get(m.seq)?.(); this.#runAcks.delete(m.seq); }
  }

  /**
   * The children's live run credentials, for the addon's handshake (run-scope.ts). Resolves once
   * the host holds them (a child may connect then), or when no host answers within `LIST_MS`.
   */
  /** The IAM users' own passphrases, by name, for the addon's handshake (kept for a restarted host). */
  setUsers(users: Record<string, string>): void {
    this.#users = users;
    if (this.#child?.connected && this.#listened) this.#send({ t: 'users', users });
  }

  setRuns(runs: SrtRun[]): Promise<void> {
    this.#runs = runs;
    if (!this.#child?.connected) return Promise.resolve();
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#runAcks.delete(seq); resolve(); }, LIST_MS);
      this.#runAcks.set(seq, () => { clearTimeout(timer); resolve(); });
      this.#send({ t: 'runs', seq, runs });
    });
  }

  /**
   * Publish or read in the table, which admits (the ingest hooks; a reader of a name an on-demand
   * process publishes waits for it first); a throwing table (a bug) refuses that connection only.
   */
  async #claim(seq: number, mode: ClaimMode, sock: number, d: PeerData): Promise<void> {
    const peer = new PeerProxy(d, this.#keyOf(d));
    this.#peers.set(d.id, peer);
    let refusal;
    try {
      refusal = await this.#streams.claim(mode, sock, peer);
    } catch (err) {
      refusal = { reason: `stream table failed: ${(err as Error).message}`, kind: 'forbidden' as const };
    }
    if (refusal) this.#peers.delete(d.id);
    this.#send({ t: 'claimed', seq, ...(refusal ? { refusal: { reason: refusal.reason, kind: refusal.kind } } : {}) });
  }

  /**
   * Where `srt.token` does not match: a user's key `<user>:<token>` the handshake let through
   * (`opts.userKeys`), for the stream table's admission to decide (an access plugin's `decideKey`).
   */
  #keyOf(d: PeerData): string | undefined {
    const token = this.#o.opts.token;
    return token === '' || d.token === token || !d.token?.includes(':') ? undefined : d.token;
  }

  /** A connection of the host ended: with its last count, its claim ends (the table tells the end hook). */
  #release(id: string, traffic: IngestTraffic): void {
    const p = this.#peers.get(id);
    if (p) p.counts = traffic;
    this.#peers.delete(id);
    this.#streams.release(id);
  }

  /** The host ended: its connections' claims end here (and their sessions); unless the service stops, it starts again. */
  #ended(code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
    this.#peers.clear();
    this.#streams.attach(undefined);
    this.#streams.releaseAll();
    for (const resolve of this.#lists.values()) resolve(EMPTY);
    this.#lists.clear();
    for (const done of this.#runAcks.values()) done();
    this.#runAcks.clear();
    if (this.#closed) return;
    if (Date.now() - this.#startedAt >= STABLE_MS) this.#restartMs = RESTART_MS;
    this.#o.log.error({ code, signal, stderr: stderr.trim().split('\n').slice(-5).join('\n'), restartInMs: this.#restartMs },
      'the SRT host process ended (its SRT connections with it); starting it again');
    this.#restartTimer = setTimeout(() => this.#restart(), this.#restartMs);
    this.#restartMs = Math.min(RESTART_MAX_MS, this.#restartMs * 2);
  }

  #restart(): void {
    this.#restartTimer = undefined;
    if (this.#closed) return;
    this.#spawn((m) => {
      // a host that cannot listen exits after saying why: its exit schedules the next try
      if (m.t === 'listening') this.#o.log.info({ port: m.port }, 'the SRT host process listens again');
      else this.#o.log.error({ stage: m.stage, why: m.message }, 'the SRT host process could not start again');
    });
  }

  /**
   * A reload kept the host (its settings are unchanged): the next app's logger and children
   * service from now on (the table is the core's, re-bound to the new app's hooks already).
   * `announce` then tells that app's hooks of the live connections.
   */
  rebind(o: Pick<SrtHostOptions, 'log' | 'children'>): void {
    this.#o = { ...this.#o, ...o };
  }

  /** The live connections to the current hooks, through the table (`onPublish` / `onPlay`), their bytes counted from now on. */
  announce(): void {
    this.#streams.announce();
  }

  /** GET /api/v3/srt: the streams from the table, each connection's log and statistics from the host. */
  async list(): Promise<SrtChannels> {
    return this.#streams.listing(await this.#fromHost());
  }

  /** The host's connections and log (empty while it restarts). */
  #fromHost(): Promise<SrtChannels> {
    const child = this.#child;
    if (!child?.connected) return Promise.resolve(EMPTY);
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#lists.delete(seq); resolve(EMPTY); }, LIST_MS);
      this.#lists.set(seq, (v) => { clearTimeout(timer); resolve(v); });
      this.#send({ t: 'list', seq });
    });
  }

  #send(m: ToHost): void {
    if (this.#child?.connected) this.#child.send(m);
  }

  /** Stops the host: it ends every connection (the end hooks fire through it), then exits. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unwatch();
    clearTimeout(this.#restartTimer);
    if (this.#child) await endIpcChild(this.#child, 3000);
  }
}
