import type { FileDoorChannel, FileDoorTapModule } from '../../sdk/file-door.ts';
import type { Collector } from './collector.ts';
import {
  BITRATE_FULL, EXPIRE_S, LIVE, RESERVED, SLOTS, STATE_BYTES, type CopyBatch, type CopyMessage, type DoorInit, type MainMessage,
} from './door-wire.ts';
import { siblingModule } from '../../sdk/module-url.ts';

/** Ids main has not heard of whose bytes wait for their registration, at most. */
const MAX_WAITING = 10_000;
/** Ticks (seconds) the bytes of an id main has not heard of wait for its registration. */
const WAIT_TICKS = 3;

/**
 * The plugin's side of the HLS door tap (door-tap.ts): publishes the `hls` collector's admission
 * state for the copies (door-wire.ts), tells them which session ids it holds, and applies their
 * batches to the collectors: registrations (deduplicated: a copy that had not heard of an id
 * another registered may register it again), the reservations they took, the bytes they sent,
 * and the start of a run of refusals (`onLimit`, the `session.limit` event).
 */
export class HlsDoor {
  readonly module: FileDoorTapModule;
  readonly #hls: Collector;
  readonly #ingress: Collector;
  readonly #onLimit: ((reason: string) => void) | undefined;
  readonly #state: Int32Array;
  readonly #known = new Set<string>();
  /** Per unknown id: its bytes, whether a segment was among them, and the ticks it waited. */
  readonly #waiting = new Map<string, [number, 0 | 1, number]>();
  #full: string[] = [];
  #horizon: number;
  #channel: FileDoorChannel | undefined;

  constructor(hls: Collector, ingress: Collector, ignore: readonly string[], onLimit?: (reason: string) => void) {
    this.#hls = hls;
    this.#ingress = ingress;
    this.#onLimit = onLimit;
    const state = new SharedArrayBuffer(STATE_BYTES);
    this.#state = new Int32Array(state);
    this.#horizon = Math.floor(Date.now() / 1000) - EXPIRE_S;
    const init: DoorInit = { state, maxSessions: hls.settings.maxSessions, ignore: [...ignore] };
    this.module = { name: 'sessions', url: siblingModule('./door-tap.ts', import.meta.url), init };
  }

  /** Listens to the copies over `channel` and tells them what main holds. */
  connect(channel: FileDoorChannel): void {
    this.#channel = channel;
    channel.onMessage((m) => this.receive(m));
    this.#sayAll();
  }

  receive(raw: unknown): void {
    const m = raw as CopyMessage;
    if (m.t === 'hello') this.#sayAll();
    else if (m.t === 'batch') this.#batch(m);
  }

  /**
   * Once a second, after the collectors' tick: expired reservations are cleared, closed sessions
   * dropped from the copies' lists, waiting bytes of unknown ids dropped, the bitrate state published.
   */
  tick(nowMs: number): void {
    const horizon = Math.floor(nowMs / 1000) - EXPIRE_S;
    for (let s = Math.max(this.#horizon + 1, horizon - SLOTS + 1); s <= horizon; s++) Atomics.store(this.#state, RESERVED + (s % SLOTS), 0);
    this.#horizon = Math.max(this.#horizon, horizon);
    this.#syncKnown();
    // bytes whose registration did not come within WAIT_TICKS ticks are dropped
    for (const [id, w] of this.#waiting) if (++w[2] >= WAIT_TICKS) this.#waiting.delete(id);
    this.#publishBitrate();
  }

  #batch(b: CopyBatch): void {
    const add: string[] = [];
    for (const r of b.reg ?? []) {
      // the first registration wins; a copy that had not heard of the id registers it again
      this.#hls.register(r.id, { reference: r.reference, location: r.location, peer: r.peer, extra: r.extra });
      if (!this.#known.has(r.id) && this.#hls.has(r.id)) {
        this.#known.add(r.id);
        add.push(r.id);
      }
    }
    // the places become sessions before the reservations are given back: the total never dips
    Atomics.store(this.#state, LIVE, this.#hls.size());
    for (const [second, n] of b.res ?? []) {
      if (second > this.#horizon) Atomics.sub(this.#state, RESERVED + (second % SLOTS), n);
    }
    if (add.length) this.#say({ t: 'known', add, drop: [] });
    for (const id of add) this.#release(id);
    for (const [id, bytes, segment] of b.tx ?? []) this.#egress(id, bytes, segment);
    if (b.lim !== undefined) this.#onLimit?.(b.lim);
  }

  #egress(id: string, bytes: number, segment: 0 | 1): void {
    if (this.#hls.has(id)) {
      if (segment) this.#hls.activate(id);
      this.#hls.egress(id, bytes);
      return;
    }
    // another copy's registration of this id may still be on its way: wait for it until the tick
    const w = this.#waiting.get(id);
    if (w) {
      w[0] += bytes;
      if (segment) w[1] = 1;
    } else if (this.#waiting.size < MAX_WAITING) {
      this.#waiting.set(id, [bytes, segment, 0]);
    }
  }

  #syncKnown(): void {
    const add: string[] = [];
    const drop: string[] = [];
    for (const id of this.#known) {
      if (!this.#hls.has(id)) {
        this.#known.delete(id);
        drop.push(id);
      }
    }
    // sessions registered on the collector directly (a vendor through sessionsRef) count too
    for (const id of this.#hls.ids()) {
      if (!this.#known.has(id)) {
        this.#known.add(id);
        add.push(id);
      }
    }
    Atomics.store(this.#state, LIVE, this.#hls.size());
    if (add.length || drop.length) this.#say({ t: 'known', add, drop });
    for (const id of this.#waiting.keys()) this.#release(id);
  }

  /** Counts the bytes that waited for `id`'s registration. */
  #release(id: string): void {
    const w = this.#waiting.get(id);
    if (!w || !this.#hls.has(id)) return;
    this.#waiting.delete(id);
    if (w[1]) this.#hls.activate(id);
    this.#hls.egress(id, w[0]);
  }

  /** Reference 11.6: egress top * 1.15 + 2 * the playlist's upload rate >= max_bitrate_mbit. */
  #publishBitrate(): void {
    const over = this.#hls.settings.bitrateFull;
    const all = over?.(0) ?? false;
    Atomics.store(this.#state, BITRATE_FULL, all ? 1 : 0);
    const full: string[] = [];
    if (over && !all) for (const id of this.#ingress.ids()) if (over(this.#ingress.sessionRxBitrate(id))) full.push(id);
    if (full.length === this.#full.length && full.every((l, i) => l === this.#full[i])) return;
    this.#full = full;
    this.#say({ t: 'full', locations: full });
  }

  #sayAll(): void {
    this.#say({ t: 'known', add: [...this.#known], drop: [] });
    this.#say({ t: 'full', locations: this.#full });
  }

  #say(m: MainMessage): void {
    this.#channel?.broadcast(m);
  }
}
