import type { SessionInfo } from './api.ts';

/** One line of the history, as `<db.dir>/sessions/<collector>.json` keeps it (reference 10.2). */
export interface HistoryEntry {
  location: string;
  peer: string;
  reference: string;
  total_sessions: number;
  total_rxbytes: number;
  total_txbytes: number;
}

/** The persisted document. */
export interface HistoryFile {
  sessions: Record<string, HistoryEntry>;
}

export interface Traffic { sessions: number; traffic_rx_mb: number; traffic_tx_mb: number }
export interface HistorySummary extends Traffic {
  remote: Record<string, Traffic & { local: Record<string, Traffic> }>;
  local: Record<string, Traffic>;
  reference: Record<string, Traffic>;
}

const mb = (bytes: number) => Math.floor(bytes / 1024 / 1024);

/** Closed sessions of one collector, aggregated by `location:peer:reference`. */
export class History {
  readonly #entries = new Map<string, HistoryEntry>();
  /** True when something changed since the last `markSaved`. */
  dirty = false;

  add(info: Required<SessionInfo>, rx: number, tx: number): void {
    const key = `${info.location}:${info.peer}:${info.reference}`;
    let e = this.#entries.get(key);
    if (!e) {
      e = { location: info.location, peer: info.peer, reference: info.reference, total_sessions: 0, total_rxbytes: 0, total_txbytes: 0 };
      this.#entries.set(key, e);
    }
    e.total_sessions++;
    e.total_rxbytes += rx;
    e.total_txbytes += tx;
    this.dirty = true;
  }

  /** Takes a persisted file's entries (malformed ones are skipped). */
  load(file: unknown): void {
    const sessions = (file as Partial<HistoryFile> | null)?.sessions;
    if (!sessions || typeof sessions !== 'object') return;
    for (const [key, e] of Object.entries(sessions)) {
      if (typeof e?.reference !== 'string' || !Number.isFinite(e.total_sessions)) continue;
      this.#entries.set(key, {
        location: String(e.location), peer: String(e.peer), reference: e.reference,
        total_sessions: e.total_sessions, total_rxbytes: Number(e.total_rxbytes) || 0, total_txbytes: Number(e.total_txbytes) || 0,
      });
    }
  }

  toFile(): HistoryFile {
    return { sessions: Object.fromEntries(this.#entries) };
  }

  totals(): { sessions: number; rx: number; tx: number } {
    let sessions = 0, rx = 0, tx = 0;
    for (const e of this.#entries.values()) {
      sessions += e.total_sessions;
      rx += e.total_rxbytes;
      tx += e.total_txbytes;
    }
    return { sessions, rx, tx };
  }

  /** Historic session count over references starting with `prefix`. */
  totalWithPrefix(prefix: string): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.reference.startsWith(prefix)) n += e.total_sessions;
    return n;
  }

  /** The `summary` part of a SessionSummary (reference 5.14): by peer, location, reference, totals. */
  summary(): HistorySummary {
    const raw = { remote: new Map<string, [number, number, number, Map<string, [number, number, number]>]>(), local: new Map<string, [number, number, number]>(), reference: new Map<string, [number, number, number]>() };
    const bump = (m: Map<string, [number, number, number]>, k: string, e: HistoryEntry) => {
      const v = m.get(k) ?? [0, 0, 0];
      v[0] += e.total_sessions; v[1] += e.total_rxbytes; v[2] += e.total_txbytes;
      m.set(k, v);
    };
    for (const e of this.#entries.values()) {
      const r = raw.remote.get(e.peer) ?? [0, 0, 0, new Map()];
      r[0] += e.total_sessions; r[1] += e.total_rxbytes; r[2] += e.total_txbytes;
      bump(r[3], e.location, e);
      raw.remote.set(e.peer, r);
      bump(raw.local, e.location, e);
      bump(raw.reference, e.reference, e);
    }
    const t = ([s, rx, tx]: readonly number[]): Traffic => ({ sessions: s!, traffic_rx_mb: mb(rx!), traffic_tx_mb: mb(tx!) });
    const obj = (m: Map<string, [number, number, number]>) => Object.fromEntries([...m].map(([k, v]) => [k, t(v)]));
    const totals = this.totals();
    return {
      remote: Object.fromEntries([...raw.remote].map(([k, v]) => [k, { ...t([v[0], v[1], v[2]]), local: obj(v[3]) }])),
      local: obj(raw.local),
      reference: obj(raw.reference),
      ...t([totals.sessions, totals.rx, totals.tx]),
    };
  }
}
