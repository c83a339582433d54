import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { endIpcChild, type ChildrenService, type StreamTable } from '../../../sdk/index.ts';
import { SrtRelay, type SrtChannels } from '../relay.ts';
import { EventsLog } from '../events-log.ts';
import type { SrtRawStats } from '../native.ts';
import type { SrtRun } from '../run-scope.ts';
import {
  ACCEPT, CLOSE, CLOSED, decodeFields, FAILED, LISTENING, LOG, NAMES, PUBLISHED, REJECT, RUNS, RUNS_SET, START, STATS, STATS_OF,
  startFields, TRAFFIC, USERS, WATCH, type HostOptions,
} from './protocol.ts';
import { HostStreams } from './table-link.ts';
import { readFrames, writeControl } from './media-pipe.ts';

/** First wait before the host is started again after a fault; doubles up to the maximum. */
const RESTART_MS = 250;
const RESTART_MAX_MS = 10_000;
/** A host that ran this long before its fault starts the next time without delay build-up. */
const STABLE_MS = 30_000;
/** How long a question to the host (statistics, run credentials) waits before it is answered empty. */
const ASK_MS = 2000;
/** How long a stopping host may take to end its connections before it is killed. */
const STOP_GRACE_MS = 3000;

const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

export interface SrtHostOptions {
  children: ChildrenService;
  log: Logger;
  /** The service's stream table: SRT publishes and reads there, admitted by it (the ingest hooks). */
  streams: StreamTable;
  /** The host program (native.ts `hostPath`). */
  path: string;
  opts: HostOptions;
}

type First = (m: { ok: true; port: number; libsrt: string } | { ok: false; stage: string; message: string }) => void;

/**
 * The service's side of the SRT host program (addon/host.cc): starts it (confined like every
 * child), runs the relay over its events (claims in the stream table, which admits them: the
 * ingest hooks), carries the media both ways over its pipe, writes its log lines into the
 * service's log, and when it ends by a fault (a crash inside libsrt) ends its connections'
 * sessions and streams and starts it again on the same port.
 */
export class SrtHost {
  #o: SrtHostOptions;
  #child: ChildProcess | undefined;
  #pipe: Socket | undefined;
  readonly #streams: HostStreams;
  readonly #relay: SrtRelay;
  readonly #unwatch: () => void;
  /** Questions to the host waiting for its answer, by sequence number. */
  #asks = new Map<number, (data: Buffer | undefined) => void>();
  #seq = 0;
  #closed = false;
  #restartMs = RESTART_MS;
  #restartTimer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  /** Listened once: from then on a host that ends is started again. */
  #listened = false;
  /** The children's run credentials last pushed (a host started again gets them at once). */
  #runs: SrtRun[] = [];
  #runGrants = new Map<string, ReadonlySet<string>>();
  #users: Record<string, string> = {};
  port = 0;

  constructor(o: SrtHostOptions) {
    this.#o = o;
    this.#streams = new HostStreams(o.streams, o.opts.handshakeMs, (sock, why) => this.#relay.kick(sock, why), (f, m) => this.#o.log.warn(f, m));
    this.#relay = new SrtRelay({
      log: { debug: (f, m) => this.#o.log.debug(f, m), info: (f, m) => this.#o.log.info(f, m), warn: (f, m) => this.#o.log.warn(f, m), error: (f, m) => this.#o.log.error(f, m) },
      token: o.opts.token, userKeys: o.opts.userKeys, events: new EventsLog({ enable: o.opts.logEnable, topics: o.opts.logTopics }),
      runs: (token) => this.#runGrants.get(token),
      table: {
        claim: async (peer) => {
          try {
            const r = await this.#streams.claim(peer.mode, peer.sock, peer);
            return r && { reason: r.reason, kind: r.kind };
          } catch (err) {
            return { reason: `stream table failed: ${(err as Error).message}`, kind: 'forbidden' };
          }
        },
        media: (sock, chunk) => this.#streams.published(sock, chunk),
        release: (peer) => this.#streams.release(peer.id),
      },
      sockets: { close: (sock) => this.#control(CLOSE, [sock]), watch: (sock) => this.#control(WATCH, [sock]) },
    });
    // the host refuses requests for names nothing publishes, and second publishers, in the handshake
    this.#unwatch = o.streams.onChange((names) => this.#names(names));
  }

  /**
   * The names the host admits requests for and refuses publishers of: the live ones, and those an
   * on-demand process would publish once read; and the names it admits requests for only: those of
   * on-demand processes a demand started, not live yet (its own SRT publisher must pass, and a
   * second player that comes meanwhile waits for it as the first does).
   */
  #names(live: readonly string[] = this.#o.streams.list().map((s) => s.name)): void {
    const names = new Set([...live, ...this.#o.streams.demandNames()]);
    const readable = this.#o.streams.demandNames('running').filter((n) => !names.has(n));
    // an SRT resource may be written with a leading '/': both spellings name the table's stream
    const both = (list: Iterable<string>) => [...list].flatMap((n) => [n, `/${n}`]);
    const named = both(names);
    this.#control(NAMES, [], [String(named.length), ...named, ...both(readable)]);
  }

  /** Starts the host; resolves with the bound port, rejects with the start or bind failure. */
  start(): Promise<{ port: number; libsrt: string }> {
    return new Promise((resolve, reject) => this.#spawn((m) => {
      if (m.ok) resolve(m);
      else reject(Object.assign(new Error(m.message), { stage: m.stage }));
    }));
  }

  #spawn(first: First): void {
    if (!existsSync(this.#o.path)) {
      first({ ok: false, stage: 'host', message: 'not built' });
      return;
    }
    // nothing on its command line or in its environment: the settings go over the pipe
    // libsrt makes a thread per publisher: srt.max_connections bounds them, not encoder.confinement.max_tasks
    const child = this.#o.children.spawn(this.#o.path, [], { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], maxTasks: 0 });
    this.#child = child;
    const pipe = child.stdio[3] as Socket;
    this.#pipe = pipe;
    this.#streams.attach(pipe);
    this.#startedAt = Date.now();
    let stderr = '';
    let settled = false;
    const settle: First = (m) => { if (!settled) { settled = true; first(m); } };
    pipe.on('error', () => {});
    readFrames(pipe, (kind, ids, data) => {
      if (kind === LISTENING || kind === FAILED) this.#started(kind, data, settled, settle);
      else {
        try {
          this.#frame(kind, ids[0] ?? -1, data);
        } catch (err) {
          this.#relay.fail(ids[0] ?? -1, err);
        }
      }
    }, (why) => this.#o.log.error({ why }, 'the SRT host pipe broke'));
    child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
    child.on('error', (err) => settle({ ok: false, stage: 'host', message: `cannot start the SRT host: ${err.message}` }));
    child.on('exit', (code, signal) => {
      if (this.#child === child) { this.#child = undefined; this.#pipe = undefined; }
      settle({ ok: false, stage: 'host', message: `the SRT host ended at start (${signal ?? code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}` });
      // a first start that fails is the boot's error (start() rejects); later ones are tried again
      if (this.#listened) this.#ended(code, signal, stderr);
    });
    this.#control(START, [], startFields(this.#o.opts));
  }

  #started(kind: number, data: Buffer, settled: boolean, settle: First): void {
    const f = decodeFields(data) ?? [];
    if (settled) return;
    if (kind === FAILED) {
      settle({ ok: false, stage: f[0] ?? 'host', message: f[1] ?? 'unknown' });
      return;
    }
    this.port = Number(f[0]);
    this.#o.opts.port = this.port;
    this.#listened = true;
    this.#names();
    this.#pushRuns(0);
    this.#control(USERS, [], Object.entries(this.#users).flat());
    settle({ ok: true, port: this.port, libsrt: f[1] ?? '' });
  }

  /** A frame of the host: it is a child like any other, what it sends is checked, not trusted. */
  #frame(kind: number, id: number, data: Buffer): void {
    if (kind === PUBLISHED) return this.#relay.data(id, data);
    if (kind === STATS_OF || kind === RUNS_SET) {
      this.#asks.get(id)?.(data);
      this.#asks.delete(id);
      return;
    }
    if (kind === TRAFFIC) return this.#traffic(data);
    const f = decodeFields(data);
    if (!f) return;
    if (kind === ACCEPT) this.#relay.accepted(id, f[0] ?? '', f[1] ?? '');
    else if (kind === CLOSED) this.#relay.closed(id, f[0] ?? 'closed', f[1] === 'host', Number(f[2]) || 0, Number(f[3]) || 0);
    else if (kind === REJECT) this.#relay.rejected(f[0] ?? '', f[1] ?? '', Number(f[2]) || 0, f[3] ?? '');
    else if (kind === LOG) this.#log(f);
  }

  #traffic(data: Buffer): void {
    const rows = parse(data.toString('utf8'));
    if (!Array.isArray(rows)) return;
    for (const row of rows) if (Array.isArray(row)) this.#relay.traffic(Number(row[0]), Number(row[1]) || 0, Number(row[2]) || 0);
  }

  #log([level = 'warn', msg = '', fields = '{}']: string[]): void {
    const f = parse(fields);
    this.#o.log[LEVELS.has(level) ? level as 'warn' : 'warn'](typeof f === 'object' && f !== null ? f : {}, msg);
  }

  /** The IAM users' own passphrases, by name, for the host's handshake (kept for a restarted host). */
  setUsers(users: Record<string, string>): void {
    this.#users = users;
    if (this.#listened) this.#control(USERS, [], Object.entries(users).flat());
  }

  /**
   * The children's live run credentials, for the host's handshake (run-scope.ts). Resolves once
   * the host holds them (a child may connect then), or when no host answers within `ASK_MS`.
   */
  async setRuns(runs: SrtRun[]): Promise<void> {
    this.#runs = runs;
    this.#runGrants = new Map(runs.map((r) => [r.token, new Set(r.grants)]));
    if (!this.#pipe) return;
    await this.#ask((seq) => this.#pushRuns(seq));
  }

  #pushRuns(seq: number): void {
    this.#control(RUNS, [seq], this.#runs.flatMap((r) => [r.token, r.passphrase, r.grants.join('\n')]));
  }

  /** Asks the host (`send` with a sequence number); its answer, or undefined without one within `ASK_MS`. */
  #ask(send: (seq: number) => void): Promise<Buffer | undefined> {
    if (!this.#pipe) return Promise.resolve(undefined);
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      const timer = setTimeout(() => { this.#asks.delete(seq); resolve(undefined); }, ASK_MS);
      this.#asks.set(seq, (data) => { clearTimeout(timer); resolve(data); });
      send(seq);
    });
  }

  /** The host ended: its connections' claims end here (and their sessions); unless the service stops, it starts again. */
  #ended(code: number | null, signal: NodeJS.Signals | null, stderr: string): void {
    this.#relay.endAll('the SRT host ended');
    this.#streams.attach(undefined);
    this.#streams.releaseAll();
    for (const answer of this.#asks.values()) answer(undefined);
    this.#asks.clear();
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
      if (m.ok) this.#o.log.info({ port: m.port }, 'the SRT host process listens again');
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

  /** GET /api/v3/srt: the streams from the table, each connection's log and statistics (from the host). */
  async list(): Promise<SrtChannels> {
    const socks = this.#relay.claimed();
    const answer = socks.length === 0 ? undefined : await this.#ask((seq) => this.#control(STATS, [seq, ...socks]));
    const stats = answer ? parse(answer.toString('utf8')) : undefined;
    return this.#streams.listing(this.#relay.list(typeof stats === 'object' && stats !== null ? stats as Record<string, SrtRawStats> : {}));
  }

  #control(kind: number, ids: readonly number[], fields: readonly string[] = []): void {
    if (this.#pipe) writeControl(this.#pipe, kind, ids, fields);
  }

  /** Stops the host: every connection ends (the end hooks fire), then the host, told by the pipe's end, exits. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#unwatch();
    clearTimeout(this.#restartTimer);
    this.#relay.endAll('server stopping');
    this.#pipe?.end();
    // the pipe's end is its order to stop (it has no IPC channel to close)
    if (this.#child) await endIpcChild(this.#child, STOP_GRACE_MS);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
