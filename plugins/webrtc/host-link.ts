import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { endIpcChild, type ChildrenService } from '../../sdk/index.ts';
import { siblingModule } from '../../sdk/module-url.ts';
import type { FromHost, HostOptions, ToHost } from './host/protocol.ts';

const ENTRY = fileURLToPath(siblingModule('./host/entry.ts', import.meta.url));
/** First wait before the host is started again after a fault; doubles up to the maximum. */
const RESTART_MS = 250;
const RESTART_MAX_MS = 10_000;
const STABLE_MS = 30_000;
/** A question the host does not answer in this time fails (the host is stuck or gone). */
const ASK_MS = 10_000;
const LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

type Reply = Extract<FromHost, { seq: number }>;
/** A question to the host: the message without its `seq`. */
type Question = ToHost extends infer M ? (M extends { seq: number } ? Omit<M, 'seq'> : never) : never;

export interface HostEvents {
  /** A session connected, or ended in the host. */
  state(id: string, state: 'connected' | 'closed', why: string): void;
  traffic(rows: ReadonlyArray<readonly [string, number, number]>): void;
  /** The host ended by a fault: every session and feed it had is gone. */
  lost(): void;
}

/** When the host may go: `idleMs` after the service holds nothing in it (`busy`); 0 keeps it. */
export interface HostIdle {
  idleMs: number;
  /** Whether the service has a session or a feed in the host (or one on its way). */
  busy(): boolean;
}

/**
 * The service's side of the WebRTC host process: starts it through the children service (confined
 * like every child), asks it questions with a deadline, passes its events on, writes its log lines
 * into the service's log, and when it ends by a fault (a crash in libdatachannel) reports the loss
 * and starts it again. A host with no session and no feed for `idle.idleMs` is ended (its memory
 * goes back to the system with it) and the next question starts one again (issue 46.2).
 */
export class HostLink {
  readonly #children: ChildrenService;
  readonly #log: Logger;
  readonly #opts: HostOptions;
  readonly #events: HostEvents;
  readonly #idle: HostIdle;
  #child: ChildProcess | undefined;
  #asks = new Map<number, { resolve: (m: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  #seq = 0;
  #closed = false;
  #restartMs = RESTART_MS;
  #restartTimer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  /** A start under way (the boot's, or one a question asked for). */
  #starting: Promise<void> | undefined;
  /** Hosts ended for being idle: their exit is no fault. */
  readonly #retired = new WeakSet<ChildProcess>();
  /** The idle host's end under way (a new one starts after it). */
  #retiring: Promise<void> | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  version = '';

  constructor(children: ChildrenService, log: Logger, opts: HostOptions, events: HostEvents, idle: HostIdle = { idleMs: 0, busy: () => true }) {
    this.#children = children;
    this.#log = log;
    this.#opts = opts;
    this.#events = events;
    this.#idle = idle;
  }

  /** Starts the host; rejects when node-datachannel cannot be loaded. Idle, it ends `idleMs` later. */
  async start(): Promise<void> {
    await this.#start();
    this.idleCheck();
  }

  /** One start at a time, after an idle host's end; rejects as `start` does. */
  #start(): Promise<void> {
    this.#starting ??= (async () => {
      await this.#retiring;
      if (this.#closed) throw new Error('the WebRTC service is closed');
      await new Promise<void>((resolve, reject) => this.#spawn((err) => (err ? reject(err) : resolve())));
    })().finally(() => { this.#starting = undefined; });
    return this.#starting;
  }

  #spawn(first: (err?: Error) => void): void {
    // the service's own host (a runtime of its threads, libdatachannel's): its sessions are bounded by webrtc's limits
    const child = this.#children.spawn(process.execPath, [ENTRY], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], maxTasks: 0 });
    this.#child = child;
    this.#startedAt = Date.now();
    let stderr = '';
    let settled = false;
    const settle = (err?: Error) => { if (!settled) { settled = true; first(err); } };
    child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString()).slice(-2000); });
    child.on('message', (m: FromHost) => {
      if (m.t === 'ready') { this.version = String(m.version); settle(); return; }
      if (m.t === 'failed') { settle(new Error(String(m.message))); return; }
      this.#message(m);
    });
    child.on('error', (err) => settle(new Error(`cannot start the WebRTC host: ${err.message}`)));
    child.on('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      const why = `${signal ?? code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`;
      if (!settled) { settle(new Error(`the WebRTC host ended at start (${why})`)); return; }
      if (!this.#retired.has(child)) this.#ended(why);
    });
    child.send({ t: 'start', opts: this.#opts } satisfies ToHost);
  }

  #message(m: FromHost): void {
    // the host is a child like any other: what it sends is checked, not trusted
    if (m.t === 'log') this.#log[LEVELS.has(m.level) ? m.level : 'warn'](m.fields ?? {}, String(m.msg));
    else if (m.t === 'state') {
      this.#events.state(String(m.id), m.state === 'connected' ? 'connected' : 'closed', String(m.why ?? ''));
      this.idleCheck();
    }
    else if (m.t === 'traffic' && Array.isArray(m.rows)) this.#events.traffic(m.rows);
    else if ('seq' in m && typeof m.seq === 'number') {
      const a = this.#asks.get(m.seq);
      if (!a) return;
      this.#asks.delete(m.seq);
      clearTimeout(a.timer);
      a.resolve(m);
    }
  }

  /**
   * One question and its answer; rejects when the host is down or does not answer in time. An idle
   * host that was ended is started first (not one that ended by a fault: that one waits its turn).
   */
  async ask(q: Question): Promise<Reply> {
    clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    // a host starting answers once ready (its first message readies it)
    if (this.#starting || (!this.#child && !this.#closed && !this.#restartTimer)) await this.#start();
    const child = this.#child;
    if (!child?.connected) throw new Error('the WebRTC host is not running');
    const seq = ++this.#seq;
    try {
      return await new Promise<Reply>((resolve, reject) => {
        const timer = setTimeout(() => { this.#asks.delete(seq); reject(new Error('the WebRTC host did not answer')); }, ASK_MS);
        this.#asks.set(seq, { resolve, reject, timer });
        child.send({ ...q, seq } as ToHost);
      });
    } finally {
      this.idleCheck();
    }
  }

  send(m: Exclude<ToHost, { seq: number }>): void {
    if (this.#child?.connected) this.#child.send(m);
    this.idleCheck();
  }

  /**
   * The service let go of something in the host (or asked): a host that holds nothing now ends
   * `idleMs` from now unless something comes first.
   */
  idleCheck(): void {
    if (this.#idle.idleMs === 0 || this.#closed || !this.#child || this.#asks.size > 0 || this.#starting || this.#idle.busy()) {
      clearTimeout(this.#idleTimer);
      this.#idleTimer = undefined;
      return;
    }
    this.#idleTimer ??= setTimeout(() => this.#retire(), this.#idle.idleMs);
  }

  #retire(): void {
    this.#idleTimer = undefined;
    const child = this.#child;
    if (!child || this.#closed || this.#asks.size > 0 || this.#starting || this.#idle.busy()) return;
    this.#retired.add(child);
    this.#child = undefined;
    this.#log.info({ idleMs: this.#idle.idleMs, pid: child.pid }, 'the WebRTC host held no session: ended (the next offer starts it again)');
    this.#retiring = endIpcChild(child, 3000).finally(() => { this.#retiring = undefined; });
  }

  #ended(why: string): void {
    for (const a of this.#asks.values()) { clearTimeout(a.timer); a.reject(new Error('the WebRTC host ended')); }
    this.#asks.clear();
    this.#events.lost();
    if (this.#closed) return;
    if (Date.now() - this.#startedAt >= STABLE_MS) this.#restartMs = RESTART_MS;
    this.#log.error({ why, restartInMs: this.#restartMs }, 'the WebRTC host process ended (its sessions with it); starting it again');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (!this.#closed) this.#start().then(() => this.idleCheck(), (err: Error) => this.#log.error({ err: err.message }, 'the WebRTC host could not start again'));
    }, this.#restartMs);
    this.#restartMs = Math.min(RESTART_MAX_MS, this.#restartMs * 2);
  }

  /** The host process id (tests end it to show a fault ends only WebRTC). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Stops the host: it ends every session, then exits. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#restartTimer);
    clearTimeout(this.#idleTimer);
    await this.#starting?.catch(() => {});
    if (this.#child) await endIpcChild(this.#child, 3000);
    await this.#retiring;
  }
}
