import type { FileDoorChannel, FileDoorReport, FileDoorTapModule } from '../../sdk/file-door.ts';
import { siblingModule } from '../../sdk/module-url.ts';
import type { Collector } from './collector.ts';
import { PLAYLIST_BYTES, type HlsInit, type HlsItem, type HlsNews } from './hls.ts';

/** Ids main has not heard of whose bytes wait for their registration, at most. */
const MAX_WAITING = 10_000;
/** Ticks (seconds) the bytes of an id main has not heard of wait for its registration. */
const WAIT_TICKS = 3;
/** Ids every copy knows at once after one registered them (the door's recent set). */
const RECENT_IDS = 256;

/**
 * The plugin's side of the HLS viewer rule (hls.ts): keeps the door's counter at the sessions
 * `hls` holds, tells the copies which ids it holds and what the bitrate limit refuses, and applies
 * their reports (viewers, the first registration winning; bytes; `onLimit`, the `session.limit` event).
 */
export class HlsViewers {
  readonly module: FileDoorTapModule;
  readonly #hls: Collector;
  readonly #ingress: Collector;
  readonly #onLimit: ((reason: string) => void) | undefined;
  readonly #known = new Set<string>();
  /** Per unknown id: its bytes, whether a segment was among them, and the ticks it waited. */
  readonly #waiting = new Map<string, [number, boolean, number]>();
  #full: string[] = [];
  #channel: FileDoorChannel | undefined;

  constructor(hls: Collector, ingress: Collector, ignore: readonly string[], onLimit?: (reason: string) => void) {
    this.#hls = hls;
    this.#ingress = ingress;
    this.#onLimit = onLimit;
    const init: HlsInit = { ignore: [...ignore] };
    this.module = { name: 'sessions', url: siblingModule('./hls.ts', import.meta.url), init, counter: hls.settings.maxSessions, recent: RECENT_IDS };
  }

  /** Listens to the copies over `channel` and tells them what main holds. */
  connect(channel: FileDoorChannel): void {
    this.#channel = channel;
    channel.onReport((r) => this.#report(r));
    this.#sayAll();
  }

  /** Once a second, after the collectors' tick: closed sessions leave the copies' lists, waiting bytes expire, the bitrate state is told. */
  tick(): void {
    const drop = [...this.#known].filter((id) => !this.#hls.has(id));
    for (const id of drop) this.#known.delete(id);
    // sessions registered on the collector directly (a vendor through sessionsRef) count too
    this.#held([...this.#hls.ids()].filter((id) => this.#learn(id)), drop, [...this.#waiting.keys()]);
    for (const [id, w] of this.#waiting) if (++w[2] >= WAIT_TICKS) this.#waiting.delete(id);
    this.#publishBitrate();
  }

  #report(r: FileDoorReport): void {
    const add: string[] = [];
    for (const raw of r.items) {
      const item = raw as HlsItem;
      if (item.t === 'hello') this.#sayAll();
      else if (item.t === 'limit') this.#onLimit?.(item.reason);
      else {
        this.#hls.register(item.id, item);
        if (this.#hls.has(item.id) && this.#learn(item.id)) add.push(item.id);
      }
    }
    // the places are sessions now: the door gives their reservations back after this returns
    this.#held(add, [], add);
    for (const [key, bytes] of r.sums) this.#egress(key.slice(1), bytes, key[0] !== PLAYLIST_BYTES);
  }

  /** True when `id` was not known yet (it is now). */
  #learn(id: string): boolean {
    return this.#known.size !== this.#known.add(id).size;
  }

  /** What main holds changed: the door's counter follows, the copies hear, the bytes that waited for `release` count. */
  #held(add: string[], drop: string[], release: string[]): void {
    this.#channel?.counter.set(this.#hls.size());
    if (add.length || drop.length) this.#say({ t: 'known', add, drop });
    for (const id of release) {
      const w = this.#waiting.get(id);
      if (!w || !this.#hls.has(id)) continue;
      this.#waiting.delete(id);
      this.#egress(id, w[0], w[1]);
    }
  }

  #egress(id: string, bytes: number, segment: boolean): void {
    if (this.#hls.has(id)) {
      if (segment) this.#hls.activate(id);
      this.#hls.egress(id, bytes);
      return;
    }
    // another copy's registration of this id may still be on its way: wait for it until the tick
    const w = this.#waiting.get(id);
    if (w) {
      w[0] += bytes;
      w[1] ||= segment;
    } else if (this.#waiting.size < MAX_WAITING) {
      this.#waiting.set(id, [bytes, segment, 0]);
    }
  }

  /** Reference 11.6: egress top * 1.15 + 2 * the playlist's upload rate >= max_bitrate_mbit. */
  #publishBitrate(): void {
    const over = this.#hls.settings.bitrateFull;
    const all = over?.(0) ?? false;
    this.#channel?.counter.block(all);
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

  #say(m: HlsNews): void {
    this.#channel?.broadcast(m);
  }
}
