import type { FsServeHooks } from '../../sdk/fs-hooks.ts';
import type { FileDoor, FileDoorChannel, FileDoorReport, FileDoorTapFactory, FileDoorTapModule } from '../../sdk/file-door.ts';
import { tapInto, untap } from './taps.ts';
import { TapState, tapContext, tapStateBuffer, type WireReport } from './tap-state.ts';
import type { ToDoor, WireTap } from './wire.ts';

/** One tap module on main: what threads load, its state, and its plugin's receivers. */
interface Entry {
  wire: WireTap;
  fromCopy(message: unknown): void;
  report(r: WireReport): void;
  close(): void;
}

/**
 * The door tap modules of one app, main's side (the `fileDoorRef` service): each module's copy
 * next to main's door, the state its copies share, and its plugin's channel. A report reaches the
 * plugin, then the reservations it carries are given back (the plugin counts those places by
 * then); a reservation whose report never came (a thread died) expires after EXPIRE_S.
 */
export class DoorTapModules implements FileDoor {
  readonly #hooks: FsServeHooks;
  readonly #entries = new Map<string, Entry>();
  /** Expires the reservations of every module with a counter, once a second. */
  readonly #counters = new Set<TapState>();
  #expiry: NodeJS.Timeout | undefined;
  /** The threads' copies, once the door runs there. */
  toThreads: ((m: ToDoor) => void) | undefined;

  constructor(hooks: FsServeHooks) {
    this.#hooks = hooks;
  }

  async tap(module: FileDoorTapModule): Promise<FileDoorChannel> {
    return this.attach(module, (await import(module.url)).default as FileDoorTapFactory);
  }

  /** `tap` with the module's factory at hand: main's copy made, the channel given. */
  attach(module: FileDoorTapModule, factory: FileDoorTapFactory): FileDoorChannel {
    const state = tapStateBuffer(module);
    const shared = new TapState(state);
    let fromCopy: (m: unknown) => void = () => {};
    let onReport: (r: FileDoorReport) => void = () => {};
    let toCopy: (m: unknown) => void = () => {};
    const report = (r: WireReport) => {
      onReport({ sums: r.sums, items: r.items });
      for (const [second, n] of r.res) shared.giveBack(second, n);
    };
    const copy = tapContext(module.init, state, { send: (m) => fromCopy(m), onMessage: (fn) => { toCopy = fn; }, report }, true);
    const taps = factory(copy.ctx);
    tapInto(this.#hooks, module.name, taps);
    if (module.counter) this.#counters.add(shared);
    this.#expiry ??= this.#counters.size > 0 ? setInterval(() => this.expire(Date.now()), 1000).unref() : undefined;
    let open = true;
    const entry: Entry = {
      wire: { name: module.name, url: module.url, init: module.init, state },
      fromCopy: (m) => fromCopy(m),
      report,
      close: () => {
        if (!open) return;
        open = false;
        this.#counters.delete(shared);
        if (this.#entries.get(module.name) === entry) this.#entries.delete(module.name);
        untap(this.#hooks, module.name);
        taps.close?.();
        copy.close();
      },
    };
    this.#entries.set(module.name, entry);
    return {
      broadcast: (m) => {
        toCopy(m);
        this.toThreads?.({ t: 'tap', name: module.name, message: m });
      },
      onMessage: (fn) => { fromCopy = fn; },
      onReport: (fn) => { onReport = fn; },
      counter: { taken: () => shared.taken(), full: () => shared.full(), blocked: () => shared.blocked(), set: (n) => shared.set(n), block: (on) => shared.block(on) },
      recent: shared,
      close: entry.close,
    };
  }

  /** Clears the reservations older than EXPIRE_S of every counter (each second; tests call it with their time). */
  expire(nowMs: number): void {
    for (const c of this.#counters) c.expire(nowMs);
  }

  /** The modules as the threads load them. */
  wire(): WireTap[] {
    return [...this.#entries.values()].map((e) => e.wire);
  }

  fromTap(name: string, message: unknown): void {
    this.#entries.get(name)?.fromCopy(message);
  }

  reportOf(name: string, r: WireReport): void {
    this.#entries.get(name)?.report(r);
  }

  /** The app closes: every module's timer stops, its copies' last reports are sent. */
  close(): void {
    for (const e of [...this.#entries.values()]) e.close();
    clearInterval(this.#expiry);
    this.#expiry = undefined;
  }
}
