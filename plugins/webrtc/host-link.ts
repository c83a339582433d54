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

/**
 * The service's side of the WebRTC host process: starts it through the children service (confined
 * like every child), asks it questions with a deadline, passes its events on, writes its log lines
 * into the service's log, and when it ends by a fault (a crash in libdatachannel) reports the loss
 * and starts it again.
 */
export class HostLink {
  readonly #children: ChildrenService;
  readonly #log: Logger;
  readonly #opts: HostOptions;
  readonly #events: HostEvents;
  #child: ChildProcess | undefined;
  #asks = new Map<number, { resolve: (m: Reply) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  #seq = 0;
  #closed = false;
  #restartMs = RESTART_MS;
  #restartTimer: NodeJS.Timeout | undefined;
  #startedAt = 0;
  version = '';

  constructor(children: ChildrenService, log: Logger, opts: HostOptions, events: HostEvents) {
    this.#children = children;
    this.#log = log;
    this.#opts = opts;
    this.#events = events;
  }

  /** Starts the host; rejects when node-datachannel cannot be loaded. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => this.#spawn((err) => (err ? reject(err) : resolve())));
  }

  #spawn(first: (err?: Error) => void): void {
    const child = this.#children.spawn(process.execPath, [ENTRY], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
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
      this.#ended(why);
    });
    child.send({ t: 'start', opts: this.#opts } satisfies ToHost);
  }

  #message(m: FromHost): void {
    // the host is a child like any other: what it sends is checked, not trusted
    if (m.t === 'log') this.#log[LEVELS.has(m.level) ? m.level : 'warn'](m.fields ?? {}, String(m.msg));
    else if (m.t === 'state') this.#events.state(String(m.id), m.state === 'connected' ? 'connected' : 'closed', String(m.why ?? ''));
    else if (m.t === 'traffic' && Array.isArray(m.rows)) this.#events.traffic(m.rows);
    else if ('seq' in m && typeof m.seq === 'number') {
      const a = this.#asks.get(m.seq);
      if (!a) return;
      this.#asks.delete(m.seq);
      clearTimeout(a.timer);
      a.resolve(m);
    }
  }

  /** One question and its answer; rejects when the host is down or does not answer in time. */
  ask(q: Question): Promise<Reply> {
    const child = this.#child;
    if (!child?.connected) return Promise.reject(new Error('the WebRTC host is not running'));
    const seq = ++this.#seq;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.#asks.delete(seq); reject(new Error('the WebRTC host did not answer')); }, ASK_MS);
      this.#asks.set(seq, { resolve, reject, timer });
      child.send({ ...q, seq } as ToHost);
    });
  }

  send(m: Exclude<ToHost, { seq: number }>): void {
    if (this.#child?.connected) this.#child.send(m);
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
      if (!this.#closed) this.#spawn((err) => { if (err) this.#log.error({ err: err.message }, 'the WebRTC host could not start again'); });
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
    if (this.#child) await endIpcChild(this.#child, 3000);
  }
}
