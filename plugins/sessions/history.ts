import type { SessionInfo } from './api.ts';
import type { SessionSummary } from './schema.ts';

/** One line of the history, as `<db.dir>/sessions/<collector>.json` keeps it (reference 10.2). */
export interface HistoryEntry {
  location: string;
  peer: string;
  reference: string;
  total_sessions: number;
  total_rxbytes: number;
  total_txbytes: number;
}

/** Sessions and bytes summed over history entries. */
interface Sum { sessions: number; rx: number; tx: number }
type Traffic = SessionSummary['summary']['local'][string];

const mb = (bytes: number) => Math.floor(bytes / 1024 / 1024);
const traffic = (s: Sum): Traffic => ({ sessions: s.sessions, traffic_rx_mb: mb(s.rx), traffic_tx_mb: mb(s.tx) });
const traffics = (m: Map<string, Sum>) => Object.fromEntries([...m].map(([k, s]) => [k, traffic(s)]));

/** Adds `e` to the sum under `key`. */
function bump(m: Map<string, Sum>, key: string, e: HistoryEntry): void {
  const s = m.get(key) ?? { sessions: 0, rx: 0, tx: 0 };
  s.sessions += e.total_sessions;
  s.rx += e.total_rxbytes;
  s.tx += e.total_txbytes;
  m.set(key, s);
}

/** Closed sessions of one collector, aggregated by `location:peer:reference`. */
export class History {
  readonly #entries = new Map<string, HistoryEntry>();
  /** True when something changed since the last write. */
  dirty = false;

  add(info: Required<SessionInfo>, rx: number, tx: number): void {
    const key = `${info.location}:${info.peer}:${info.reference}`;
    const e = this.#entries.get(key) ?? { location: info.location, peer: info.peer, reference: info.reference, total_sessions: 0, total_rxbytes: 0, total_txbytes: 0 };
    this.#entries.set(key, e);
    e.total_sessions++;
    e.total_rxbytes += rx;
    e.total_txbytes += tx;
    this.dirty = true;
  }

  /** Takes a persisted file's entries (malformed ones are skipped). */
  load(file: unknown): void {
    const sessions = (file as { sessions?: Record<string, HistoryEntry> } | null)?.sessions;
    if (!sessions || typeof sessions !== 'object') return;
    for (const [key, e] of Object.entries(sessions)) {
      if (typeof e?.reference !== 'string' || !Number.isFinite(e.total_sessions)) continue;
      this.#entries.set(key, {
        location: String(e.location), peer: String(e.peer), reference: e.reference,
        total_sessions: e.total_sessions, total_rxbytes: Number(e.total_rxbytes) || 0, total_txbytes: Number(e.total_txbytes) || 0,
      });
    }
  }

  /** The persisted document. */
  toFile(): { sessions: Record<string, HistoryEntry> } {
    return { sessions: Object.fromEntries(this.#entries) };
  }

  /** Sessions and bytes over the references starting with `prefix` (`''`: all). */
  totals(prefix = ''): Sum {
    const all = new Map<string, Sum>();
    for (const e of this.#entries.values()) if (e.reference.startsWith(prefix)) bump(all, '', e);
    return all.get('') ?? { sessions: 0, rx: 0, tx: 0 };
  }

  /** The `summary` part of a SessionSummary (reference 5.14): by peer (and its locations), location, reference, totals. */
  summary(): SessionSummary['summary'] {
    const remote = new Map<string, Sum>(), byPeer = new Map<string, Map<string, Sum>>();
    const local = new Map<string, Sum>(), reference = new Map<string, Sum>();
    for (const e of this.#entries.values()) {
      bump(remote, e.peer, e);
      if (!byPeer.has(e.peer)) byPeer.set(e.peer, new Map());
      bump(byPeer.get(e.peer)!, e.location, e);
      bump(local, e.location, e);
      bump(reference, e.reference, e);
    }
    return {
      remote: Object.fromEntries([...remote].map(([peer, s]) => [peer, { ...traffic(s), local: traffics(byPeer.get(peer)!) }])),
      local: traffics(local), reference: traffics(reference), ...traffic(this.totals()),
    };
  }
}
