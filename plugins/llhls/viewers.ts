/*
 * The viewers of `/hls`: a stream's access rules apply to them as to its other players. A viewer
 * is a client address asking for one stream's playlists (with one token): its first playlist
 * request runs the stream table's `prePlay` taps (`StreamTable.admit`), whose refusal answers the
 * protocol family `http`'s status (401, 403, 404, 409, 503) with `LLHLS_REFUSED`; an admitted
 * viewer is kept while it asks again within `keepMs` (a player reloads every part or segment), so
 * the taps run once per viewing, not once per reload. Viewers are not announced (`onPlay`): an HLS
 * viewer spans many connections and the sessions plugin counts `/hls` by the file door already.
 */
import { refusalCode, type IngestPeer, type StreamAudience, type StreamTable } from '../../sdk/index.ts';
import { llhlsErrors } from './errors.ts';

export interface ViewersOptions {
  /** An admitted viewer is kept this long after its last playlist request. */
  keepMs: number;
  /** Admitted viewers kept at most; beyond, a new viewer's taps run on every request. */
  max: number;
  now?: () => number;
  log: { warn(obj: object, msg: string): void };
  /** A viewer is kept from now on (admitted), or no more: the serving threads' views hear of it. */
  onKept?(name: string, ip: string, token: string, kept: boolean): void;
}

interface Kept { until: number; audience: StreamAudience | undefined; admitting?: Promise<void>; who: [name: string, ip: string, token: string] }

/** Query keys that are the player's protocol or a secret, not parameters a tap should see. */
const NOT_PARAMS = new Set(['token', '_HLS_msn', '_HLS_part', '_HLS_skip']);

/** `ip:0` as the ingest hooks expect an address (IPv6 in brackets): a viewer has no one port. */
const remoteOf = (ip: string) => `${ip.includes(':') ? `[${ip}]` : ip}:0`;

/**
 * While the viewers are at their bound, a new viewer's request sweeps them at most this often (the
 * periodic sweep of `index.ts` runs anyway): a sweep walks every kept viewer, and strangers can keep
 * the table full with new addresses or tokens.
 */
export const FULL_SWEEP_GAP_MS = 1000;

export class Viewers {
  #streams: StreamTable;
  #o: ViewersOptions;
  #now: () => number;
  #kept = new Map<string, Kept>();
  #seq = 0;
  /** When a sweep last ran (`#now()` ms). */
  #sweptAt = -Infinity;

  constructor(streams: StreamTable, o: ViewersOptions) {
    this.#streams = streams;
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /** Viewers kept now. */
  get size(): number {
    return this.#kept.size;
  }

  /**
   * Admits the client `ip` to the playlists of `name` (its query `q`): resolves when a kept
   * viewer asks again or the `prePlay` taps let a new one in; rejects with the refusal's ApiError.
   */
  admit(name: string, ip: string, q: URLSearchParams): Promise<void> {
    const token = q.get('token') ?? undefined;
    const key = `${name}\n${ip}\n${token ?? ''}`;
    const now = this.#now();
    const k = this.#kept.get(key);
    if (k && (k.admitting || k.until >= now)) {
      if (!k.admitting) k.until = now + this.#o.keepMs;
      return k.admitting ?? Promise.resolve();
    }
    if (k) this.#drop(key, k);
    const peer = this.#peer(name, ip, token, q);
    const admitting = this.#streams.admit(peer, { announce: 'later' }).then((r) => {
      if (r.ok) return r.handle;
      this.#o.log.warn({ protocol: 'hls', stream: name, remote: peer.remote, reason: r.reason }, `hls play refused: ${r.reason}`);
      throw llhlsErrors.refused(refusalCode(r, 'http'), r.reason);
    });
    if (this.#kept.size >= this.#o.max && now - this.#sweptAt >= FULL_SWEEP_GAP_MS) this.sweep();
    if (this.#kept.size >= this.#o.max) return admitting.then((a) => { a.leave(); });
    const entry: Kept = { until: 0, audience: undefined, who: [name, ip, token ?? ''] };
    entry.admitting = admitting.then((a) => {
      entry.audience = a;
      entry.until = this.#now() + this.#o.keepMs;
      entry.admitting = undefined;
      if (this.#kept.get(key) === entry) this.#o.onKept?.(...entry.who, true);
    }, (err: unknown) => {
      if (this.#kept.get(key) === entry) this.#kept.delete(key);
      throw err;
    });
    this.#kept.set(key, entry);
    return entry.admitting;
  }

  #peer(name: string, ip: string, token: string | undefined, q: URLSearchParams): IngestPeer {
    const params: Record<string, string> = {};
    for (const [k, v] of q) if (!NOT_PARAMS.has(k) && Object.keys(params).length < 32) params[k.slice(0, 64)] = v.slice(0, 256);
    return {
      id: `hls-${++this.#seq}`, protocol: 'hls', stream: `/${name}`, remote: remoteOf(ip),
      ...(token !== undefined ? { token } : {}), params, traffic: () => ({ rxBytes: 0, txBytes: 0 }),
    };
  }

  /** A kept viewer asked again where the store did not see it (a serving thread answered it): it is kept longer. */
  touch(name: string, ip: string, token: string): void {
    const k = this.#kept.get(`${name}\n${ip}\n${token}`);
    if (k && !k.admitting && k.until >= this.#now()) k.until = this.#now() + this.#o.keepMs;
  }

  #drop(key: string, k: Kept): void {
    this.#kept.delete(key);
    k.audience?.leave();
    if (k.audience) this.#o.onKept?.(...k.who, false);
  }

  /** Lets go of the viewers that did not ask within `keepMs`. */
  sweep(): void {
    const now = this.#now();
    this.#sweptAt = now;
    for (const [key, k] of this.#kept) if (!k.admitting && k.until < now) this.#drop(key, k);
  }

  /** Lets go of every viewer. */
  close(): void {
    for (const [key, k] of this.#kept) this.#drop(key, k);
  }
}
