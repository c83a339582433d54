import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { IdleTick, writeFileAtomic } from '../../sdk/index.ts';
import type { CollectorOptions, SessionsService } from './api.ts';
import type { SessionsConfig, SessionSummary } from './schema.ts';
import { Collector } from './collector.ts';
import { History } from './history.ts';
import { collectableBy } from './ignore-list.ts';

/** Collectors whose egress counts for the bitrate admission check (reference 11.6). */
const EGRESS = ['hls', 'rtmp', 'srt', 'ffmpeg'];
const mbit = (bps: number) => Math.round((bps / 1024 / 1024) * 1000) / 1000;

/**
 * The session registry: named collectors, one 1 s tick closing idle sessions, the histories (kept
 * across config reloads), and with `persistDir` the files `<persistDir>/<collector>.json` (read
 * when a collector is created, written atomically every `persist_interval_sec` and at stop).
 */
export class SessionRegistry implements SessionsService {
  readonly #collectors = new Map<string, Collector>();
  readonly #cfg: SessionsConfig;
  readonly #collectable: (ip: string) => boolean;
  readonly #persistDir: string | undefined;
  readonly #log: Logger;
  readonly #histories: Map<string, History>;
  #persist: NodeJS.Timeout | undefined;
  #tick: IdleTick | undefined;

  /** `histories` outlives the registry (kept across config reloads); files are read once per name. */
  constructor(cfg: SessionsConfig, persistDir: string | undefined, log: Logger, histories = new Map<string, History>()) {
    this.#cfg = cfg;
    this.#histories = histories;
    this.#collectable = collectableBy(cfg.ip_ignorelist);
    this.#persistDir = persistDir;
    this.#log = log;
  }

  collector(name: string, opts: CollectorOptions = {}): Collector {
    let c = this.#collectors.get(name);
    if (c) return c;
    const limits = opts.limits ?? true;
    const cfg = this.#cfg;
    const maxTx = cfg.max_bitrate_mbit * 1024 * 1024;
    c = new Collector(name, {
      idleMs: (opts.idleTimeoutSec ?? cfg.session_timeout_sec) * 1000,
      pendingMs: (opts.pendingTimeoutSec ?? 5) * 1000,
      maxSessions: limits ? cfg.max_sessions : 0,
      maxTxBitrate: limits ? maxTx : 0,
      collectable: limits ? this.#collectable : undefined,
      bitrateFull: limits && maxTx > 0 ? (extraRx) => this.#egressTop() * 1.15 + 2 * extraRx >= maxTx : undefined,
      onRegister: () => this.#tick?.wake(),
    }, this.#history(name));
    this.#collectors.set(name, c);
    return c;
  }

  names(): string[] {
    return [...this.#collectors.keys()];
  }

  get(name: string): Collector | undefined {
    return this.#collectors.get(name);
  }

  count(collector: string, prefix: string): { current: number; total: number } {
    const c = this.#collectors.get(collector);
    return c ? { current: c.countActive(prefix), total: c.history.totals(prefix).sessions } : { current: 0, total: 0 };
  }

  /** The `SessionSummary` of a collector; an empty one for an unknown name (reference 4.11). */
  summary(name: string): SessionSummary {
    const c = this.#collectors.get(name);
    const list = c?.active() ?? [];
    const r = c?.rates() ?? { rx: 0, tx: 0 };
    return {
      active: {
        list, sessions: list.length, bandwidth_rx_mbit: mbit(r.rx), bandwidth_tx_mbit: mbit(r.tx),
        max_sessions: c?.settings.maxSessions ?? 0, max_bandwidth_rx_mbit: 0, max_bandwidth_tx_mbit: mbit(c?.settings.maxTxBitrate ?? 0),
      },
      summary: (c?.history ?? new History()).summary(),
    };
  }

  /**
   * Starts the periodic history writes and the tick, between `beforeTick` and `afterTick`; the tick stops
   * once no collector holds a session or a top rate (issue 46.2: idle, nothing wakes), a registration restarts it.
   */
  start(beforeTick?: () => void, afterTick?: () => void): void {
    this.#tick = new IdleTick(1000, () => {
      beforeTick?.();
      const now = Date.now();
      let busy = false;
      for (const c of this.#collectors.values()) busy = c.tick(now) || busy;
      afterTick?.();
      return busy;
    });
    this.#tick.wake();
    const every = this.#cfg.persist_interval_sec;
    if (this.#persistDir && every > 0) {
      this.#persist = setInterval(() => void this.save().catch((err: Error) => this.#log.warn({ err }, 'writing the sessions history failed')), every * 1000).unref();
    }
  }

  /** Stops the timers, closes every session (active ones go to the history) and writes the history. */
  async stop(): Promise<void> {
    clearInterval(this.#persist);
    this.#tick?.stop();
    for (const c of this.#collectors.values()) c.closeAll();
    await this.save();
  }

  /** Writes the changed histories (atomically: temp file, fsync, rename). */
  async save(): Promise<void> {
    const dir = this.#persistDir;
    if (!dir) return;
    for (const c of this.#collectors.values()) {
      if (!c.history.dirty) continue;
      c.history.dirty = false;
      try {
        await writeFileAtomic(join(dir, `${c.name}.json`), JSON.stringify(c.history.toFile()));
      } catch (err) {
        c.history.dirty = true;
        throw err;
      }
    }
  }

  #egressTop(): number {
    return EGRESS.reduce((sum, n) => sum + (this.#collectors.get(n)?.topTx ?? 0), 0);
  }

  /** The history of `name`: the one kept across reloads, or read from its file. */
  #history(name: string): History {
    const kept = this.#histories.get(name);
    if (kept) return kept;
    const h = new History();
    const dir = this.#persistDir;
    if (dir) {
      mkdirSync(dir, { recursive: true });
      try {
        h.load(JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.#log.warn({ err, collector: name }, 'unreadable sessions history; starting empty');
      }
    }
    this.#histories.set(name, h);
    return h;
  }
}
