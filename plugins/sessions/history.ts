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

/**
 * Entries a collector's history keeps at most (`location:peer:reference`). The peer of an HLS
 * viewer is its `Referer` host and of an ingest client its address: a stranger can make new ones
 * at will. A session of a new key beyond the bound is counted under `*:*:<reference>` (its
 * location and peer dropped; the totals and the per-reference figures stay right), and beyond
 * twice the bound under `*:*:*`.
 */
export const MAX_HISTORY_ENTRIES = 10_000;
/** The key and the location and peer of an entry that folds sessions beyond the bound. */
const FOLDED = '*';

/** Closed sessions of one collector, aggregated by `location:peer:reference`, with their running sum. */
export class History {
  readonly #entries = new Map<string, HistoryEntry>();
  /** Every entry summed: the metrics read it every sample (issue 46.2), so it is kept, not summed again. */
  readonly #sum: Sum = { sessions: 0, rx: 0, tx: 0 };
  /** The same per reference (a public widget asks for one reference's total on every request). */
  readonly #byReference = new Map<string, Sum>();
  readonly #max: number;
  /** True when something changed since the last write. */
  dirty = false;

  /** `max`: entries kept before new keys fold (`MAX_HISTORY_ENTRIES`). */
  constructor(max = MAX_HISTORY_ENTRIES) {
    this.#max = max;
  }

  add(info: Required<SessionInfo>, rx: number, tx: number): void {
    const e = this.#entry(info.location, info.peer, info.reference);
    this.#count(e, 1, rx, tx);
    this.dirty = true;
  }

  /** Adds sessions and bytes to an entry and to the running sums. */
  #count(e: HistoryEntry, sessions: number, rx: number, tx: number): void {
    e.total_sessions += sessions;
    e.total_rxbytes += rx;
    e.total_txbytes += tx;
    let r = this.#byReference.get(e.reference);
    if (!r) this.#byReference.set(e.reference, (r = { sessions: 0, rx: 0, tx: 0 }));
    for (const s of [this.#sum, r]) {
      s.sessions += sessions;
      s.rx += rx;
      s.tx += tx;
    }
  }

  /** The entry of a key, made when new; a new key beyond the bound gets the folded entry. */
  #entry(location: string, peer: string, reference: string): HistoryEntry {
    let key = `${location}:${peer}:${reference}`;
    let e = this.#entries.get(key);
    if (e) return e;
    if (this.#entries.size >= this.#max) {
      const keep = this.#entries.size < 2 * this.#max;
      if (!keep) reference = FOLDED;
      location = peer = FOLDED;
      key = `${FOLDED}:${FOLDED}:${reference}`;
      e = this.#entries.get(key);
      if (e) return e;
    }
    e = { location, peer, reference, total_sessions: 0, total_rxbytes: 0, total_txbytes: 0 };
    this.#entries.set(key, e);
    return e;
  }

  /** Takes a persisted file's entries (malformed ones are skipped; beyond the bound they fold as sessions do). */
  load(file: unknown): void {
    const sessions = (file as { sessions?: Record<string, HistoryEntry> } | null)?.sessions;
    if (!sessions || typeof sessions !== 'object') return;
    for (const e of Object.values(sessions)) {
      if (typeof e?.reference !== 'string' || !Number.isFinite(e.total_sessions)) continue;
      const rx = Number(e.total_rxbytes) || 0;
      const tx = Number(e.total_txbytes) || 0;
      this.#count(this.#entry(String(e.location), String(e.peer), e.reference), e.total_sessions, rx, tx);
    }
  }

  /** The persisted document. */
  toFile(): { sessions: Record<string, HistoryEntry> } {
    return { sessions: Object.fromEntries(this.#entries) };
  }

  /** Entries kept (at most twice the bound, plus one). */
  get size(): number {
    return this.#entries.size;
  }

  /** Sessions and bytes over the references starting with `prefix` (`''`: all), from the sums per reference. */
  totals(prefix = ''): Readonly<Sum> {
    if (prefix === '') return this.#sum;
    const out = { sessions: 0, rx: 0, tx: 0 };
    for (const [reference, s] of this.#byReference) {
      if (!reference.startsWith(prefix)) continue;
      out.sessions += s.sessions;
      out.rx += s.rx;
      out.tx += s.tx;
    }
    return out;
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
