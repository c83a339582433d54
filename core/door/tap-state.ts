import type { FileDoorCounter, FileDoorRecent, FileDoorReport, FileDoorTapContext, FileDoorTapModule } from '../../sdk/file-door.ts';

/*
 * What the copies of one door tap module share and tell their plugin (sdk/file-door.ts): a
 * counter with reservations and a ring of recent ids in one SharedArrayBuffer the door lays out,
 * and the reports each copy gathers. No SDK runtime import: this runs in every serving thread.
 *
 * The state, Int32 words written with Atomics: MAX (the limit, 0: none) and CAP (ring entries),
 * fixed; COUNT, the plugin's own count; BLOCKED, 1 while the plugin says no place is left for a
 * reason of its own; LIMITED, 1 during a run of refusals (the copy that turns it 0 -> 1 hears
 * it); HEAD, the ring's next ticket; SLOTS words of reservations by the second they were taken in
 * (a copy adds its place, then reads the total: of two copies racing for the last place at most
 * one keeps it; main gives a place back when the report carrying it was handled, and clears a
 * slot EXPIRE_S seconds old: a thread that died leaves no lasting hole); then CAP ring entries of
 * ENTRY words: a sequence (0 while written), the length, the id's Latin-1 characters 4 per word.
 */
const MAX = 0;
const CAP = 1;
const COUNT = 2;
const BLOCKED = 3;
const LIMITED = 4;
const HEAD = 5;
const SLOTS_AT = 6;
const SLOTS = 16;
/** Seconds after which a reservation nobody reported is cleared. */
export const EXPIRE_S = 8;
const RING_AT = SLOTS_AT + SLOTS;
const ID_WORDS = 6;
const ENTRY = 2 + ID_WORDS;
/** A thread's copy reports this often at most (ms), or at these sizes. */
export const REPORT_MS = 500;
const MAX_ITEMS = 1000;
const MAX_SUMS = 4096;

/** The state of a module as it declared it (`counter`, `recent`). */
export function tapStateBuffer(m: Pick<FileDoorTapModule, 'counter' | 'recent'>): SharedArrayBuffer {
  const cap = Math.max(0, Math.floor(m.recent ?? 0));
  const buffer = new SharedArrayBuffer((RING_AT + cap * ENTRY) * 4);
  const w = new Int32Array(buffer);
  w[MAX] = Math.max(0, Math.floor(m.counter ?? 0));
  w[CAP] = cap;
  return buffer;
}

/** True for an id the ring can hold: at most 24 characters, each Latin-1. */
function fits(id: string): boolean {
  if (id.length > ID_WORDS * 4) return false;
  for (let i = 0; i < id.length; i++) if (id.charCodeAt(i) > 0xff) return false;
  return true;
}

/** Word `i` of an id (4 Latin-1 characters, missing ones 0). */
function word(id: string, i: number): number {
  let v = 0;
  for (let c = 0; c < 4; c++) v |= (id.charCodeAt(i * 4 + c) & 0xff) << (c * 8);
  return v | 0;
}

/** One copy's (or main's) view of a module's state. */
export class TapState implements FileDoorRecent {
  readonly #w: Int32Array;
  /** Main: seconds up to this one are cleared. */
  #horizon = Math.floor(Date.now() / 1000) - EXPIRE_S;

  constructor(buffer: SharedArrayBuffer) {
    this.#w = new Int32Array(buffer);
  }

  /** True when the counter has a limit (only then are places reserved). */
  get limited(): boolean {
    return this.#w[MAX]! > 0;
  }

  taken(): number {
    let n = Atomics.load(this.#w, COUNT);
    for (let i = 0; i < SLOTS; i++) n += Atomics.load(this.#w, SLOTS_AT + i);
    return n;
  }

  full(): boolean {
    return this.limited && this.taken() >= this.#w[MAX]!;
  }

  /** A place in the slot of `second`: true when taken (without a limit nothing is taken). */
  take(second: number): boolean {
    if (!this.limited) return true;
    const slot = SLOTS_AT + (second % SLOTS);
    Atomics.add(this.#w, slot, 1);
    if (this.taken() <= this.#w[MAX]!) return true;
    Atomics.sub(this.#w, slot, 1);
    return false;
  }

  blocked(): boolean {
    return Atomics.load(this.#w, BLOCKED) === 1;
  }

  /** Main: no place is left whatever the count (`on`), or places are by the count again. */
  block(on: boolean): void {
    Atomics.store(this.#w, BLOCKED, on ? 1 : 0);
  }

  refused(): boolean {
    return Atomics.compareExchange(this.#w, LIMITED, 0, 1) === 0;
  }

  admitted(): void {
    if (Atomics.load(this.#w, LIMITED) !== 0) Atomics.store(this.#w, LIMITED, 0);
  }

  /** Main: the plugin's own count. */
  set(n: number): void {
    Atomics.store(this.#w, COUNT, n);
  }

  /** Main: places of `second` the plugin counts now (a slot cleared meanwhile is not touched). */
  giveBack(second: number, n: number): void {
    if (second > this.#horizon) Atomics.sub(this.#w, SLOTS_AT + (second % SLOTS), n);
  }

  /** Main, about once a second: clears the slots of reservations older than EXPIRE_S. */
  expire(nowMs: number): void {
    const horizon = Math.floor(nowMs / 1000) - EXPIRE_S;
    for (let s = Math.max(this.#horizon + 1, horizon - SLOTS + 1); s <= horizon; s++) Atomics.store(this.#w, SLOTS_AT + (s % SLOTS), 0);
    this.#horizon = Math.max(this.#horizon, horizon);
  }

  add(id: string): void {
    const cap = this.#w[CAP]!;
    if (cap === 0 || !fits(id)) return;
    const ticket = Atomics.add(this.#w, HEAD, 1);
    const at = RING_AT + (ticket % cap) * ENTRY;
    Atomics.store(this.#w, at, 0);
    Atomics.store(this.#w, at + 1, id.length);
    for (let i = 0; i < ID_WORDS; i++) Atomics.store(this.#w, at + 2 + i, word(id, i));
    Atomics.store(this.#w, at, (ticket % 0x7fffffff) + 1);
  }

  has(id: string): boolean {
    const w = this.#w;
    if (!fits(id)) return false;
    for (let e = 0, cap = w[CAP]!; e < cap; e++) {
      const at = RING_AT + e * ENTRY;
      const seq = Atomics.load(w, at);
      if (seq === 0 || Atomics.load(w, at + 1) !== id.length) continue;
      let same = true;
      for (let i = 0; i < ID_WORDS && same; i++) same = Atomics.load(w, at + 2 + i) === word(id, i);
      // an entry rewritten while it was read is not trusted
      if (same && Atomics.load(w, at) === seq) return true;
    }
    return false;
  }
}

/** A report as it crosses to main: what the plugin gets, and the reservations main gives back after. */
export interface WireReport extends FileDoorReport {
  res: Array<[second: number, n: number]>;
}

/** What one copy gathers for its plugin: at once on main (`immediate`), in a thread at most every `everyMs`. */
export class TapReporter {
  #sums = new Map<string, number>();
  #items: unknown[] = [];
  #res = new Map<number, number>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  readonly #send: (r: WireReport) => void;
  readonly #immediate: boolean;
  readonly #everyMs: number;

  constructor(send: (r: WireReport) => void, immediate: boolean, everyMs = REPORT_MS) {
    this.#send = send;
    this.#immediate = immediate;
    this.#everyMs = everyMs;
  }

  add(key: string, n: number): void {
    this.#sums.set(key, (this.#sums.get(key) ?? 0) + n);
    if (this.#sums.size >= MAX_SUMS) this.flush();
    else this.#soon();
  }

  item(item: unknown, now = false): void {
    this.#items.push(item);
    if (now || this.#items.length >= MAX_ITEMS) this.flush();
    else this.#soon();
  }

  /** A place taken in the slot of `second`: it goes with the next report (on main: with the item that follows it). */
  reserved(second: number): void {
    this.#res.set(second, (this.#res.get(second) ?? 0) + 1);
    if (!this.#immediate) this.#soon();
  }

  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#sums.size === 0 && this.#items.length === 0 && this.#res.size === 0) return;
    const r: WireReport = { sums: [...this.#sums], items: this.#items, res: [...this.#res] };
    this.#sums = new Map();
    this.#items = [];
    this.#res = new Map();
    this.#send(r);
  }

  /** Sends what is left; nothing is gathered after. */
  close(): void {
    this.flush();
    this.#closed = true;
  }

  #soon(): void {
    if (this.#immediate || this.#closed) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.#everyMs).unref();
  }
}

/** The context of one copy of a tap module over its state buffer; `close` sends its last report. */
export function tapContext(
  init: unknown, state: SharedArrayBuffer, io: Pick<FileDoorTapContext, 'send' | 'onMessage'> & { report(r: WireReport): void },
  immediate: boolean, everyMs?: number,
): { ctx: FileDoorTapContext; close(): void } {
  const shared = new TapState(state);
  const reporter = new TapReporter((r) => io.report(r), immediate, everyMs);
  const counter: FileDoorCounter = {
    taken: () => shared.taken(),
    full: () => shared.full(),
    blocked: () => shared.blocked(),
    reserve: () => {
      const second = Math.floor(Date.now() / 1000);
      if (!shared.take(second)) return false;
      if (shared.limited) reporter.reserved(second);
      return true;
    },
    refused: () => shared.refused(),
    admitted: () => shared.admitted(),
  };
  const ctx: FileDoorTapContext = {
    init, send: io.send, onMessage: io.onMessage, counter, recent: shared,
    add: (key, n) => reporter.add(key, n),
    report: (item, now) => reporter.item(item, now),
  };
  return { ctx, close: () => reporter.close() };
}
