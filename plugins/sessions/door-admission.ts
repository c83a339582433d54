import { BITRATE_EXCEEDED, BITRATE_FULL, LIMITED, LIVE, NUMBER_EXCEEDED, RECENT, RECENT_HEAD, RECENT_WORDS, RESERVED, SLOTS } from './door-wire.ts';

/**
 * The admission rule of the `hls` collector (Collector.admission with the registry's
 * `bitrateFull`) read from the state main publishes (door-wire.ts), so every copy of the door
 * decides alone and all of them together admit no more than `max_sessions`.
 */
export class DoorAdmission {
  readonly #state: Int32Array;
  readonly #max: number;

  constructor(state: SharedArrayBuffer, maxSessions: number) {
    this.#state = new Int32Array(state);
    this.#max = maxSessions;
  }

  /** True when there is a `max_sessions` (else `reserve` takes no place). */
  get counted(): boolean {
    return this.#max > 0;
  }

  /** Sessions main holds plus the ones admitted and not registered yet. */
  taken(): number {
    let n = Atomics.load(this.#state, LIVE);
    for (let i = 0; i < SLOTS; i++) n += Atomics.load(this.#state, RESERVED + i);
    return n;
  }

  /**
   * Why a new viewer would be refused now, or undefined; `locationFull`: the playlist's upload
   * rate alone puts it over the bitrate limit (main's list).
   */
  full(locationFull: boolean): string | undefined {
    if (this.#max > 0 && this.taken() >= this.#max) return NUMBER_EXCEEDED;
    if (locationFull || Atomics.load(this.#state, BITRATE_FULL) === 1) return BITRATE_EXCEEDED;
    return undefined;
  }

  /**
   * Takes a place for a viewer this copy registers, in the slot of `second`: added first, then
   * the total is read, so of two copies racing for the last place at most one keeps it.
   * Undefined when taken, else why not (the place is given back at once).
   */
  reserve(second: number): string | undefined {
    if (this.#max <= 0) return undefined;
    const slot = RESERVED + (second % SLOTS);
    Atomics.add(this.#state, slot, 1);
    if (this.taken() <= this.#max) return undefined;
    Atomics.sub(this.#state, slot, 1);
    return NUMBER_EXCEEDED;
  }

  /** A refusal; true when it starts a run of refusals (exactly one copy is told so). */
  refused(): boolean {
    return Atomics.compareExchange(this.#state, LIMITED, 0, 1) === 0;
  }

  /** An admission ends a run of refusals. */
  admitted(): void {
    if (Atomics.load(this.#state, LIMITED) !== 0) Atomics.store(this.#state, LIMITED, 0);
  }

  /** Puts a registered id in the ring of recent ones (every copy sees it at once). */
  remember(id: string): void {
    const ticket = Atomics.add(this.#state, RECENT_HEAD, 1);
    const base = RECENT_HEAD + 1 + (ticket % RECENT) * RECENT_WORDS;
    Atomics.store(this.#state, base, 0);
    for (let w = 0; w < 6; w++) Atomics.store(this.#state, base + 1 + w, word(id, w));
    Atomics.store(this.#state, base, (ticket % 0x7fffffff) + 1);
  }

  /** True when a copy registered `id` lately (the ring's last RECENT registrations). */
  recent(id: string): boolean {
    const st = this.#state;
    for (let e = 0; e < RECENT; e++) {
      const base = RECENT_HEAD + 1 + e * RECENT_WORDS;
      const seq = Atomics.load(st, base);
      if (seq === 0) continue;
      let same = true;
      for (let w = 0; w < 6 && same; w++) same = Atomics.load(st, base + 1 + w) === word(id, w);
      // an entry rewritten while it was read is not trusted
      if (same && Atomics.load(st, base) === seq) return true;
    }
    return false;
  }
}

/** Word `w` of an id's first 24 ASCII bytes (4 per word, missing ones 0). */
function word(id: string, w: number): number {
  let v = 0;
  for (let i = 0; i < 4; i++) v |= (id.charCodeAt(w * 4 + i) & 0xff) << (i * 8);
  return v | 0;
}
