import type { Logger } from 'pino';
import type { ProcessCommandView, ProcessPreSave, ProcessPreStart, ProcessesService } from '../../sdk/index.ts';
import type { PlaylistPlayState } from './api.ts';
import { PLAYLIST, PREFIX, directInput, relayed, locateInputs, relayInput, replaceInputs, splitOptions, type LocatedInput } from './args.ts';
import { exhausted } from './errors.ts';
import type { PortPool } from './ports.ts';
import { addressInUse, relayKey, splitKey, type RelayEntry, type RelayFactory } from './relays.ts';
import type { Ffmpeg } from './relay/ffmpeg.ts';
import { meetDisks } from './disk-meet.ts';
import type { RelayPlaylist } from './relay/index.ts';

export interface RelaysOptions {
  /** `playout.enable`: off, `playout:` inputs are read directly (the prefix stripped). */
  enabled: boolean;
  pool: PortPool;
  processes: ProcessesService;
  ffmpeg: Ffmpeg;
  create: RelayFactory;
  /** The item sequence of a `playlist:<name>` input of a process. */
  feed?: (name: string, processId: string, log: Logger) => RelayPlaylist;
  /** Error frames set through the API, by relay key; kept across relay restarts and reloads. */
  frames: Map<string, Buffer>;
  log: Logger;
  /** A port was taken for a relay key (the sweep runs while any is held). */
  onHold?: () => void;
}

/** How often a port the machine has taken is skipped before the start gives up. */
const BUSY_TRIES = 16;

/**
 * The relays of all processes, with their ports. As in the reference, a port is held per
 * (process, `playout:` input) from the add or update that brought the input (`preSave`, which
 * refuses it when the pool is exhausted) until the process is deleted or loses that input, whether
 * the process runs or not; a process restored at boot gets its ports at its first start. Relays
 * are started (or reused) in `preStart`, which rewrites the input to the relay's socket, stopped
 * when their process stops, is deleted, or no longer has that input (`sweep`), and all at close.
 * A process's reconnect reuses its running relay, so the outputs see one continuous stream. No
 * HTTP here.
 */
export class RelayRegistry {
  readonly #o: RelaysOptions;
  readonly #relays = new Map<string, RelayEntry>();
  /** Per process: the previous start/stop, so they never interleave. */
  readonly #queue = new Map<string, Promise<unknown>>();
  readonly #stripped = new Set<string>();
  /** Ports held per relay key; every port taken from the pool is in here. */
  readonly #held = new Map<string, number>();
  #closed = false;

  constructor(o: RelaysOptions) {
    this.#o = o;
  }

  get enabled(): boolean { return this.#o.enabled; }

  /** Whether a port is held (every relay holds one): the sweep has something to look at. */
  get holding(): boolean { return this.#held.size > 0; }

  /** The running relay of (process, input), if any. */
  get(processId: string, inputId: string): RelayEntry | undefined {
    return this.#relays.get(relayKey(processId, inputId));
  }

  /**
   * The preSave tap: ports for the `playout:` inputs of an added or updated process, lowest free
   * first; a reason (the reference's message) when the pool cannot hold them. An update keeps the
   * ports of inputs it keeps and returns the others.
   */
  preSave(ev: ProcessPreSave): string | undefined {
    if (!this.#o.enabled) return undefined;
    const wanted = ev.inputs.filter((i) => relayed(i.address)).map((i) => relayKey(ev.id, i.id));
    const old = this.#heldBy(ev.previousId ?? ev.id);
    const kept = old.filter(([k]) => wanted.includes(k));
    if (wanted.length - kept.length > this.#o.pool.free + old.length - kept.length) {
      return exhausted(this.#o.pool.min, this.#o.pool.max);
    }
    for (const [k, port] of old) {
      if (wanted.includes(k)) continue;
      this.#held.delete(k);
      this.#o.pool.release(port);
    }
    for (const k of wanted) if (!this.#held.has(k)) this.#held.set(k, this.#o.pool.acquire()!);
    if (wanted.length) this.#o.onHold?.();
    return undefined;
  }

  /**
   * The viewCommand tap: a process that is not running shows the relay socket of each `playout:`
   * input that holds a port (what `preStart` will run), or the bare URL when playout is disabled.
   */
  viewCommand(v: ProcessCommandView): ProcessCommandView {
    const playout = (locateInputs(v.args, v.inputs) ?? []).filter((i) => relayed(i.address));
    if (!playout.length) return v;
    if (!this.#o.enabled) {
      const direct = playout.filter((i) => i.address.startsWith(PREFIX));
      v.args = replaceInputs(v.args, direct.map((i) => ({ input: i, with: directInput(i) })));
      return v;
    }
    const changes = playout.flatMap((input) => {
      const port = this.#held.get(relayKey(v.id, input.id));
      return port === undefined ? [] : [{ input, with: relayInput(splitOptions(input.options).process, port) }];
    });
    if (changes.length) v.args = replaceInputs(v.args, changes);
    return v;
  }

  /** Where the `playlist:` inputs of a process are, by input ID (undefined: none running). */
  playlists(processId: string): Record<string, PlaylistPlayState> | undefined {
    let out: Record<string, PlaylistPlayState> | undefined;
    for (const e of this.#relays.values()) {
      const where = e.processId === processId ? e.relay.playlist() : undefined;
      if (where) (out ??= {})[e.inputId] = where;
    }
    return out;
  }

  /** The port held for (process, input), if any. */
  heldPort(processId: string, inputId: string): number | undefined {
    return this.#held.get(relayKey(processId, inputId));
  }

  /** The preStart tap: every `playout:` input goes through a relay (or loses the prefix when disabled). */
  preStart(p: ProcessPreStart): Promise<ProcessPreStart> {
    return this.#serial(p.id, async () => {
      const info = this.#o.processes.get(p.id);
      const inputs = info ? locateInputs(p.args, info.inputs) : undefined;
      const playout = (inputs ?? []).filter((i) => relayed(i.address));
      if (!inputs && p.args.some((a) => relayed(a))) {
        // another tap reshaped the inputs: better no run than ffmpeg failing on `playout:`
        p.veto = 'the playout: inputs cannot be found in the command';
        return p;
      }
      if (!this.#o.enabled) {
        if (playout.some((i) => i.address.startsWith(PLAYLIST))) {
          p.veto = 'playlist: inputs need playout.enable';
          return p;
        }
        if (playout.length) this.#strip(p, playout);
        return p;
      }
      if (this.#closed && playout.length) {
        p.veto = 'the playout plugin is closing';
        return p;
      }
      const changes: { input: LocatedInput; with: string[] }[] = [];
      const keep = new Set<string>();
      for (const input of playout) {
        const split = splitOptions(input.options);
        const entry = await this.#ensure(p.id, input, split.relay);
        if (typeof entry === 'string') {
          // this run will not happen: the ports of its other inputs go back to the pool
          await this.#stopWhere((e) => e.processId === p.id);
          this.#release(this.#heldBy(p.id));
          p.veto = entry;
          return p;
        }
        keep.add(relayKey(p.id, input.id));
        changes.push({ input, with: relayInput(split.process, entry.port) });
      }
      await this.#stopWhere((e) => e.processId === p.id && !keep.has(relayKey(e.processId, e.inputId)));
      if (changes.length) p.args = replaceInputs(p.args, changes);
      return p;
    });
  }

  /** A process left its active states: its relays go unless it is still wanted (a reconnect follows). */
  stateChanged(id: string, to: string, cause?: string): Promise<void> {
    if (to !== 'finished' && to !== 'failed' && to !== 'killed') return Promise.resolve();
    const info = this.#o.processes.get(id);
    // a start refused before its spawn (a preStart veto, its maker's policies) does not come back by itself: its relays stop
    if (info && info.order === 'start' && !(to === 'failed' && cause === 'prepare')) return Promise.resolve();
    return this.stopProcess(id);
  }

  /** A deleted process: its relays and error frames go. */
  async deleted(id: string): Promise<void> {
    await this.stopProcess(id);
    this.#release(this.#heldBy(id));
    for (const k of this.#o.frames.keys()) if (k.startsWith(relayKey(id, ''))) this.#o.frames.delete(k);
  }

  stopProcess(id: string): Promise<void> {
    return this.#serial(id, () => this.#stopWhere((e) => e.processId === id));
  }

  /** Relays whose process is gone, stopped, invalid or without that input any more. */
  async sweep(): Promise<void> {
    const stale = new Set<string>();
    for (const e of this.#relays.values()) {
      const info = this.#o.processes.get(e.processId);
      const input = info?.inputs.find((i) => i.id === e.inputId);
      if (!info || info.order === 'stop' || !info.valid || !input) stale.add(e.processId);
    }
    await Promise.all([...stale].map((id) => this.stopProcess(id)));
    const orphans = [...this.#held].filter(([k]) => {
      const [processId, inputId] = splitKey(k);
      const input = this.#o.processes.get(processId)?.inputs.find((i) => i.id === inputId);
      return !input || !relayed(input.address);
    });
    if (orphans.length) await Promise.all(orphans.map(([k]) => this.#serial(splitKey(k)[0], async () => {
      // checked again in the process's turn: an add may have taken the key meanwhile
      const [processId, inputId] = splitKey(k);
      const input = this.#o.processes.get(processId)?.inputs.find((i) => i.id === inputId);
      if ((input !== undefined && relayed(input.address)) || this.#relays.has(k)) return;
      const port = this.#held.get(k);
      if (port !== undefined) this.#release([[k, port]]);
    })));
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([...this.#queue.values()]);
    await this.#stopWhere(() => true);
  }

  /**
   * The relay's ffmpegs reach of the disk what the process's own runs do: its maker's folders
   * (`ProcessesService.makerDisk`), asked at each spawn; after a switch by another caller, only
   * what both reach (a source that caller may change later leads no further than the caller may read).
   */
  #ffmpegOf(processId: string, switcher: RelayEntry['switcher']): Ffmpeg {
    const { binary, spawn } = this.#o.ffmpeg;
    const disk = (args: readonly string[]) => {
      const own = this.#o.processes.makerDisk(processId);
      const { caller, url } = switcher;
      const switched = caller !== undefined && args.some((a, i) => a === url && args[i - 1] === '-i');
      return switched ? meetDisks(own, this.#o.processes.makerDisk(caller)) : own;
    };
    return { binary, spawn: (file, args, o) => spawn(file, args, { ...o, disk: disk(args) }) };
  }

  /** The running relay for this input, or a new one on the lowest free port; a string says why not. */
  async #ensure(processId: string, input: LocatedInput, inputOptions: string[]): Promise<RelayEntry | string> {
    const key = relayKey(processId, input.id);
    const old = this.#relays.get(key);
    if (old && old.address === input.address && same(old.inputOptions, inputOptions)) return old;
    if (old) await this.#stopWhere((e) => e === old);
    const busy = new Set<number>();
    for (;;) {
      const port = this.#held.get(key) ?? this.#o.pool.acquire(busy);
      if (port === undefined) return exhausted(this.#o.pool.min, this.#o.pool.max);
      this.#held.set(key, port);
      this.#o.onHold?.();
      const log = this.#o.log.child({ process: processId, input: input.id, port });
      const list = input.address.startsWith(PLAYLIST) ? input.address.slice(PLAYLIST.length) : undefined;
      const switcher: RelayEntry['switcher'] = {};
      const relay = this.#o.create({
        id: input.address, url: list ?? input.address.slice(PREFIX.length), inputOptions, port, ffmpeg: this.#ffmpegOf(processId, switcher),
        label: processId, log, errorframe: this.#o.frames.get(key),
        playlist: list !== undefined ? this.#o.feed?.(list, processId, log) : undefined,
      });
      try {
        await relay.start();
      } catch (err) {
        await relay.stop().catch(() => {});
        if (addressInUse(err) && busy.size < BUSY_TRIES) {
          // another program (or a relay of ours about to stop) has it: this input moves to another
          busy.add(port);
          this.#held.delete(key);
          this.#o.pool.release(port);
          continue;
        }
        return `the playout relay for input '${input.id}' did not start: ${(err as Error).message}`;
      }
      const entry: RelayEntry = { processId, inputId: input.id, address: input.address, inputOptions, port, relay, switcher };
      this.#relays.set(key, entry);
      this.#o.log.info({ process: processId, input: input.id, port }, 'playout relay started');
      return entry;
    }
  }

  async #stopWhere(match: (e: RelayEntry) => boolean): Promise<void> {
    const gone = [...this.#relays.entries()].filter(([, e]) => match(e));
    for (const [k] of gone) this.#relays.delete(k);
    await Promise.all(gone.map(async ([, e]) => {
      try {
        await e.relay.stop();
      } catch (err) {
        this.#o.log.warn({ err, process: e.processId, input: e.inputId }, 'playout relay did not stop cleanly');
      }
    }));
  }

  #heldBy(processId: string): [string, number][] {
    const prefix = relayKey(processId, '');
    return [...this.#held].filter(([k]) => k.startsWith(prefix));
  }

  #release(entries: readonly [string, number][]): void {
    for (const [k, port] of entries) {
      this.#held.delete(k);
      this.#o.pool.release(port);
    }
  }

  /** Disabled: stock ffmpeg cannot read `playout:`, so the process reads the URL behind it directly. */
  #strip(p: ProcessPreStart, inputs: LocatedInput[]): void {
    p.args = replaceInputs(p.args, inputs.map((i) => ({ input: i, with: directInput(i) })));
    if (this.#stripped.has(p.id)) return;
    this.#stripped.add(p.id);
    this.#o.log.info({ process: p.id }, 'playout is not enabled: playout: inputs are read directly, without relay');
  }

  #serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.#queue.get(id) ?? Promise.resolve()).catch(() => {}).then(fn);
    const tail = run.catch(() => {});
    this.#queue.set(id, tail);
    void tail.then(() => { if (this.#queue.get(id) === tail) this.#queue.delete(id); });
    return run;
  }
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
