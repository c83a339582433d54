import type { SessionCollector, SessionInfo, SessionView } from './api.ts';
import { Rate, Top } from './rate.ts';
import { History } from './history.ts';
import type { IgnoreList } from './ignore-list.ts';
import { BITRATE_EXCEEDED, NUMBER_EXCEEDED } from './hls.ts';

/** How one collector behaves (from `sessions.*` and the collector's own options). */
export interface CollectorSettings {
  idleMs: number;
  pendingMs: number;
  /** 0 = unlimited. */
  maxSessions: number;
  /** bit/s, 0 = unlimited. */
  maxTxBitrate: number;
  /** Undefined: every address counts (hlsingress). */
  ignore: IgnoreList | undefined;
  /** The registry's bitrate admission check (reference 11.6), for collectors with limits. */
  bitrateFull?: (extraRx: number) => boolean;
}

interface Live {
  id: string;
  info: Required<SessionInfo>;
  createdAt: number;
  active: boolean;
  lastMs: number;
  rx: number;
  tx: number;
  rxRate: Rate;
  txRate: Rate;
}

const kbit = (bps: number) => Math.round((bps / 1024) * 1000) / 1000;

/**
 * One named collector: live sessions with their bytes and rates, the history of closed ones,
 * and the collector-wide rates. `tick` (once a second, from the registry) closes idle sessions.
 */
export class Collector implements SessionCollector {
  readonly name: string;
  readonly settings: CollectorSettings;
  readonly history: History;
  readonly #live = new Map<string, Live>();
  readonly #rx = new Rate();
  readonly #tx = new Rate();
  readonly topTx = new Top();
  readonly topRx = new Top();

  constructor(name: string, settings: CollectorSettings, history: History) {
    this.name = name;
    this.settings = settings;
    this.history = history;
  }

  register(id: string, info: SessionInfo, active = false): void {
    if (this.#live.has(id)) return;
    const now = Date.now();
    this.#live.set(id, {
      id, createdAt: Math.floor(now / 1000), active, lastMs: now, rx: 0, tx: 0, rxRate: new Rate(), txRate: new Rate(),
      info: { reference: info.reference, location: info.location || 'unknown', peer: info.peer || 'unknown', extra: info.extra ?? '' },
    });
  }

  activate(id: string): void {
    const s = this.#live.get(id);
    if (s && !s.active) {
      s.active = true;
      s.lastMs = Date.now();
    }
  }

  ingress(id: string, bytes: number): void {
    const s = this.#live.get(id);
    if (!s) return;
    const now = Date.now();
    s.lastMs = now;
    s.rx += bytes;
    s.rxRate.add(bytes, now);
    this.#rx.add(bytes, now);
  }

  egress(id: string, bytes: number): void {
    const s = this.#live.get(id);
    if (!s) return;
    const now = Date.now();
    s.lastMs = now;
    s.tx += bytes;
    s.txRate.add(bytes, now);
    this.#tx.add(bytes, now);
  }

  close(id: string): void {
    const s = this.#live.get(id);
    if (!s) return;
    this.#live.delete(id);
    if (s.active) this.history.add(s.info, s.rx, s.tx);
  }

  has(id: string): boolean {
    return this.#live.has(id);
  }

  /** Sessions held, pending ones included (what the admission counts). */
  size(): number {
    return this.#live.size;
  }

  /** The ids of the sessions held, pending ones included. */
  ids(): IterableIterator<string> {
    return this.#live.keys();
  }

  /** The ids of the active sessions, oldest first (no views built: a lookup on the upload path). */
  *activeIds(): IterableIterator<string> {
    for (const s of this.#live.values()) if (s.active) yield s.id;
  }

  collectable(ip: string): boolean {
    return this.settings.ignore ? this.settings.ignore.collectable(ip) : true;
  }

  admission(extraRxBitrate = 0): string | undefined {
    const max = this.settings.maxSessions;
    if (max > 0 && this.#live.size >= max) return NUMBER_EXCEEDED;
    if (this.settings.bitrateFull?.(extraRxBitrate)) return BITRATE_EXCEEDED;
    return undefined;
  }

  active(): SessionView[] {
    const now = Date.now();
    const out: SessionView[] = [];
    for (const s of this.#live.values()) {
      if (!s.active) continue;
      out.push({
        id: s.id, reference: s.info.reference, created_at: s.createdAt, local: s.info.location, remote: s.info.peer,
        extra: s.info.extra, bytes_rx: s.rx, bytes_tx: s.tx,
        bandwidth_rx_kbit: kbit(s.rxRate.bitrate(now)), bandwidth_tx_kbit: kbit(s.txRate.bitrate(now)),
      });
    }
    return out.sort((a, b) => a.created_at - b.created_at);
  }

  /** Active sessions only (pending ones are not viewers yet). */
  activeCount(): number {
    let n = 0;
    for (const s of this.#live.values()) if (s.active) n++;
    return n;
  }

  /** Active sessions whose reference starts with `prefix`. */
  activeWithPrefix(prefix: string): number {
    let n = 0;
    for (const s of this.#live.values()) if (s.active && s.info.reference.startsWith(prefix)) n++;
    return n;
  }

  /** Current rx of one session (HLS: the upload rate of a playlist), bit/s. */
  sessionRxBitrate(id: string): number {
    return this.#live.get(id)?.rxRate.bitrate(Date.now()) ?? 0;
  }

  rates(): { rx: number; tx: number } {
    const now = Date.now();
    return { rx: this.#rx.bitrate(now), tx: this.#tx.bitrate(now) };
  }

  /** Once a second: idle and never-activated sessions close, top rates move. */
  tick(now: number): void {
    for (const s of this.#live.values()) {
      const limit = s.active ? this.settings.idleMs : this.settings.pendingMs;
      if (now - s.lastMs >= limit) this.close(s.id);
    }
    const r = this.rates();
    this.topTx.update(r.tx);
    this.topRx.update(r.rx);
  }

  /** Closes every session (the collector stops); active ones go to the history. */
  closeAll(): void {
    for (const id of [...this.#live.keys()]) this.close(id);
  }
}
