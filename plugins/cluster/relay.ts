import type { OutgoingHttpHeaders } from 'node:http';
import { HttpForwarder, type StreamDemandSource, type StreamTable } from '../../sdk/index.ts';
import type { Log } from './connection.ts';
import { RELAY_PROTOCOL, RelayPull, type RelaySource } from './relay-pull.ts';
import type { ClusterView } from './schema.ts';

/** No answer with the stream's first bytes within this (the other node may start an on-demand process first). */
export const RELAY_FIRST_BYTE_MS = 15_000;
/** A relayed stream without readers this long ends (the other node's reader leaves with it). */
export const RELAY_IDLE_MS = 5_000;

export interface RelayOptions {
  streams: StreamTable;
  /** This node's id and the live view (nodes with the stream names each announces). */
  node: { readonly id: string; view(): ClusterView };
  /** `max_relays`: pulls at once (0: none). */
  max: number;
  /** The hop and signed headers of one request to `to` for `url`; undefined before the cluster key is read. */
  headers(to: RelaySource, url: string): OutgoingHttpHeaders | undefined;
  log: Log;
  /** How often the waiting names are compared (the announcements change them) and readers counted. */
  checkMs: number;
  firstByteMs?: number;
  idleMs?: number;
}

/**
 * The pull relay (MediaMTX's "source on demand"), this node's stream demand source for streams
 * other nodes have. Every node announces the names it serves (`served`: its live streams that no
 * relay publishes and its own demand sources' names) in `core_nodes`; a reader here of a name
 * nothing publishes here that another live node announces starts a `RelayPull` from that node
 * (the first by id), which publishes it here for this node's RTMP, SRT and WebRTC players.
 *
 * Never loops: names a relay publishes and this source's own names are never announced, a node
 * never pulls from itself, and the route that serves a pull (`relay-route.ts`) asks the demand
 * sources with this one `quiet`, so a pulled name is never pulled on again.
 */
export class StreamRelay implements StreamDemandSource {
  readonly #o: RelayOptions;
  readonly #pulls = new Map<string, RelayPull>();
  readonly #http = new HttpForwarder({ connectMs: 3000, maxSockets: 256 });
  #quiet = false;
  #key = '';
  #timer: NodeJS.Timeout | undefined;
  #off: (() => void) | undefined;

  constructor(o: RelayOptions) { this.#o = o; }

  /** Adds the source to the table and starts watching the announced names. */
  open(): void {
    this.#off = this.#o.streams.addDemandSource(this);
    this.#timer = setInterval(() => this.#changed(), this.#o.checkMs);
  }

  /** The announcements changed (a node's names, a node joined or left): the table hears of new waiting names now. */
  refresh(): void { if (this.#off) this.#changed(); }

  /** Names relayed now (starting or live). */
  get active(): string[] { return [...this.#pulls.keys()]; }

  demand(name: string): boolean {
    if (this.#quiet) return false;
    if (this.#pulls.has(name)) return true;
    if (this.#o.streams.get(name) || this.#o.max === 0) return false;
    const from = this.#holder(name);
    if (!from) return false;
    if (this.#pulls.size >= this.#o.max) {
      this.#o.log.warn({ stream: name, node: from.node, max_relays: this.#o.max }, 'cluster: stream relay refused, max_relays reached');
      return false;
    }
    const url = (u: string) => this.#o.headers(from, u);
    if (!url('/')) return false;
    const pull = new RelayPull({
      name, from, streams: this.#o.streams, http: this.#http, headers: (u) => url(u) ?? {},
      firstByteMs: this.#o.firstByteMs ?? RELAY_FIRST_BYTE_MS, idleMs: this.#o.idleMs ?? RELAY_IDLE_MS, checkMs: this.#o.checkMs, log: this.#o.log,
      onEnd: () => { if (this.#pulls.get(name) === pull) { this.#pulls.delete(name); this.#changed(); } },
    });
    this.#pulls.set(name, pull);
    this.#o.log.info({ stream: name, node: from.node }, 'cluster: relaying a stream from another node');
    pull.start();
    this.#changed();
    return true;
  }

  /** Names other live nodes serve that nothing here publishes or pulls (a read of one starts a pull). */
  waiting(): string[] {
    if (this.#quiet || this.#o.max === 0) return [];
    const out = new Set<string>();
    for (const n of this.#others()) for (const s of n.streams ?? []) if (!this.#pulls.has(s) && !this.#o.streams.get(s)) out.add(s);
    return [...out];
  }

  running(): string[] { return this.#quiet ? [] : this.active; }

  /** Runs `fn` (a table call that asks the demand sources) with this source answering nothing. */
  quiet<T>(fn: () => T): T {
    this.#quiet = true;
    try { return fn(); } finally { this.#quiet = false; }
  }

  /** What this node announces: its live streams no relay publishes, and its own demand sources' names. */
  served(): string[] {
    const s = this.#o.streams;
    return this.quiet(() => {
      const out = new Set(s.list().filter((i) => i.publisher.protocol !== RELAY_PROTOCOL).map((i) => i.name));
      for (const n of s.demandNames()) out.add(n);
      for (const n of s.demandNames('running')) out.add(n);
      return [...out].sort();
    });
  }

  #others(): ClusterView['nodes'] {
    return this.#o.node.view().nodes.filter((n) => n.id !== this.#o.node.id);
  }

  /** The live node (other than this one, the first by id) that announces `name`. */
  #holder(name: string): RelaySource | undefined {
    const n = this.#others().find((i) => i.streams?.includes(name));
    return n && { node: n.id, base: n.api_address };
  }

  /** Tells the table when the waiting or relayed names changed (SRT admits its players by them). */
  #changed(): void {
    const key = `${this.waiting().sort().join('\0')}\n${this.active.sort().join('\0')}`;
    if (key === this.#key) return;
    this.#key = key;
    this.#o.streams.demandChanged();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#off?.();
    for (const p of [...this.#pulls.values()]) p.stop('closing');
    this.#pulls.clear();
    this.#http.close();
  }
}
