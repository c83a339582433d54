/*
 * `srt.log`: the server's own connection events, by topic, for GET /api/v3/srt (reference 5.13:
 * the last 100 entries per topic, per connection and for events bound to none). Off unless
 * `srt.log.enable`; `srt.log.topics` keeps only those topics (empty = all).
 */

export interface LogEntry {
  ts: number;
  msg: string[];
}

export type TopicLog = Record<string, LogEntry[]>;

/** Entries kept per topic (Core's bound). */
export const KEEP = 100;

/** The topics the plugin writes. */
export const TOPICS = ['connection:new', 'connection:close', 'connection:refuse', 'handshake:reject'] as const;
export type Topic = (typeof TOPICS)[number];

export class EventsLog {
  #enabled: boolean;
  #topics: Set<string> | undefined;
  #global: TopicLog = {};
  #byConn = new Map<number, TopicLog>();

  constructor(opts: { enable: boolean; topics: readonly string[] }) {
    this.#enabled = opts.enable;
    this.#topics = opts.topics.length ? new Set(opts.topics) : undefined;
  }

  /** Records an event, on a connection's log when `sock` is given. */
  add(topic: Topic, msg: string, sock?: number): void {
    if (!this.#enabled || (this.#topics && !this.#topics.has(topic))) return;
    let target = this.#global;
    if (sock !== undefined) {
      target = this.#byConn.get(sock) ?? {};
      this.#byConn.set(sock, target);
    }
    const list = (target[topic] ??= []);
    list.push({ ts: Date.now(), msg: msg.split('\n') });
    if (list.length > KEEP) list.splice(0, list.length - KEEP);
  }

  /** The log of one connection ({} when none). */
  of(sock: number): TopicLog {
    return this.#byConn.get(sock) ?? {};
  }

  /** Events bound to no live connection. */
  global(): TopicLog {
    return this.#global;
  }

  /** A connection is gone: its log moves to the global one, so the listing stays bounded. */
  forget(sock: number): void {
    const log = this.#byConn.get(sock);
    this.#byConn.delete(sock);
    if (!log) return;
    for (const [topic, entries] of Object.entries(log)) {
      const list = (this.#global[topic] ??= []);
      list.push(...entries);
      list.sort((a, b) => a.ts - b.ts);
      if (list.length > KEEP) list.splice(0, list.length - KEEP);
    }
  }
}
