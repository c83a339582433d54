import type { SessionCollector, SessionInfo, SessionView } from './api.ts';
import { Rate } from './rate.ts';
import type { History } from './history.ts';
import { BITRATE_EXCEEDED, NUMBER_EXCEEDED } from './hls.ts';

/** How one collector behaves (from `sessions.*` and the collector's own options). */
export interface CollectorSettings {
  idleMs: number;
  pendingMs: number;
  /** 0 = unlimited. */
  maxSessions: number;
  /** bit/s, 0 = unlimited. */
  maxTxBitrate: number;
  /** `sessions.ip_ignorelist`; undefined: every address counts (hlsingress). */
  collectable: ((ip: string) => boolean) | undefined;
  /** The registry's bitrate admission check (reference 11.6), for collectors with limits. */
  bitrateFull?: (extraRx: number) => boolean;
  onRegister?: () => void; // a session registered: the registry's tick starts
}

interface Live {
  id: string;
  info: Required<SessionInfo>;
  createdAt: number;
  active: boolean;
  lastMs: number;
  rx: Rate;
  tx: Rate;
}

const kbit = (bps: number) => Math.round((bps / 1024) * 1000) / 1000;

/** One named collector: live sessions with their bytes and rates, the history of closed ones. */
export class Collector implements SessionCollector {
  readonly name: string;
  readonly settings: CollectorSettings;
  readonly history: History;
  readonly #live = new Map<string, Live>();
  readonly #all = { rx: new Rate(), tx: new Rate() };
  /** The egress rate's top, for the admission check: follows a rise at once, decays by 5 % a second. */
  topTx = 0;

  constructor(name: string, settings: CollectorSettings, history: History) {
    this.name = name;
    this.settings = settings;
    this.history = history;
  }

  register(id: string, info: SessionInfo, active = false): void {
    if (this.#live.has(id)) return;
    this.settings.onRegister?.();
    const now = Date.now();
    this.#live.set(id, {
      id, createdAt: Math.floor(now / 1000), active, lastMs: now, rx: new Rate(), tx: new Rate(),
      info: { reference: info.reference, location: info.location || 'unknown', peer: info.peer || 'unknown', extra: info.extra ?? '' },
    });
  }

  activate(id: string): void {
    const s = this.#live.get(id);
    if (s && !s.active) Object.assign(s, { active: true, lastMs: Date.now() });
  }

  ingress(id: string, bytes: number): void {
    this.#count(id, bytes, 'rx');
  }

  egress(id: string, bytes: number): void {
    this.#count(id, bytes, 'tx');
  }

  close(id: string): void {
    const s = this.#live.get(id);
    if (!s) return;
    this.#live.delete(id);
    if (s.active) this.history.add(s.info, s.rx.total, s.tx.total);
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

  collectable(ip: string): boolean {
    return this.settings.collectable?.(ip) ?? true;
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
        extra: s.info.extra, bytes_rx: s.rx.total, bytes_tx: s.tx.total,
        bandwidth_rx_kbit: kbit(s.rx.bitrate(now)), bandwidth_tx_kbit: kbit(s.tx.bitrate(now)),
      });
    }
    return out.sort((a, b) => a.created_at - b.created_at);
  }

  /** Active sessions (pending ones are not viewers yet) whose reference starts with `prefix`. */
  countActive(prefix = ''): number {
    let n = 0;
    for (const s of this.#live.values()) if (s.active && s.info.reference.startsWith(prefix)) n++;
    return n;
  }

  /** Current rx of one session (HLS: the upload rate of a playlist), bit/s. */
  sessionRxBitrate(id: string): number {
    return this.#live.get(id)?.rx.bitrate(Date.now()) ?? 0;
  }

  rates(): { rx: number; tx: number } {
    const now = Date.now();
    return { rx: this.#all.rx.bitrate(now), tx: this.#all.tx.bitrate(now) };
  }

  /** Once a second: idle and never-activated sessions close, the top rate moves; true while either is left. */
  tick(now: number): boolean {
    for (const s of this.#live.values()) {
      const limit = s.active ? this.settings.idleMs : this.settings.pendingMs;
      if (now - s.lastMs >= limit) this.close(s.id);
    }
    const top = Math.max(this.rates().tx, this.topTx * 0.95);
    this.topTx = top < 1 ? 0 : top;
    return this.#live.size > 0 || this.topTx > 0;
  }

  /** Closes every session (the collector stops); active ones go to the history. */
  closeAll(): void {
    for (const id of [...this.#live.keys()]) this.close(id);
  }

  /** Bytes of a session: its idle timer restarts. */
  #count(id: string, bytes: number, way: 'rx' | 'tx'): void {
    const s = this.#live.get(id);
    if (!s) return;
    s.lastMs = Date.now();
    s[way].add(bytes, s.lastMs);
    this.#all[way].add(bytes, s.lastMs);
  }
}
