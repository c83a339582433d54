import { posix } from 'node:path';
import type { Logger } from 'pino';
import { siblingModule, type FileDoor, type FileDoorChannel, type FilesystemService, type ProcessClock, type StreamTable } from '../../../sdk/index.ts';
import { budgetSubject, type ProcessEntry } from '../process-entry.ts';
import type { DemandEnv } from '../demand-runner.ts';
import { clientKey, DemandBudget, RESOURCES_RETRY_SECONDS, type BudgetLimits } from './budget.ts';
import type { BudgetGate } from '../resources/gate.ts';
import { demandKey, type DemandHit, type DemandTableMessage } from './door-tap.ts';
import { WAITING_MARK, waitingPlaylist, type Slate } from './slate.ts';
import { demandTargets, type DemandTargets, type HlsTarget } from './targets.ts';

/*
 * The engine's side of on-demand processes (issue 34): which files and stream names belong to
 * which on-demand process (told to the file door's tap module in every copy of the door, and
 * kept for the stream table's demand source), who asked for them, and the waiting playlists.
 */

export interface HubDeps {
  entries(): Iterable<ProcessEntry>;
  get(id: string): ProcessEntry | undefined;
  filesystems(): readonly FilesystemService[];
  streams?: StreamTable;
  door?: FileDoor;
  slate: Slate;
  clock: ProcessClock;
  log: Logger;
  /** `encoder.ondemand.idle_seconds`. */
  idleSeconds: number;
  /** `encoder.ondemand.max_starts_per_client`, `client_window_seconds`, `max_running` (budget.ts). */
  budget: Omit<BudgetLimits, 'fullRetrySeconds'>;
  /** The service's resource budget (`resources.*`): a demand that would start a process over it is refused. */
  resources?: BudgetGate;
  /** Whether the process's maker may still have it write `resource` (an `fs` path as policies name it): its waiting playlist is written for it. */
  mayWrite?: (e: ProcessEntry, resource: string) => boolean;
}

/** The name of the slate clip next to a waiting playlist (`cam1.m3u8` -> `cam1.ondemand-slate.ts`). */
export const slateName = (playlist: string): string => `${posix.basename(playlist, '.m3u8')}.ondemand-slate.ts`;

/**
 * Distinct HLS viewers remembered per on-demand process (a client by `clientKey`: an IPv6 one by
 * its /64). They are only counted (the process's reader count); one more while full waits until
 * the oldest has been idle for `idleSeconds`.
 */
export const MAX_DEMAND_VIEWERS = 4096;

/** Forgets the viewers idle for `idleMs` (a viewer map is in the order of their last request). */
function forgetIdle(seen: Map<string, number>, now: number, idleMs: number): void {
  for (const [key, at] of seen) {
    if (now - at < idleMs) return;
    seen.delete(key);
  }
}

export class DemandHub {
  readonly #d: HubDeps;
  /** HLS viewers by process: client key -> the last time it asked (clock ms), oldest first. */
  readonly #viewers = new Map<string, Map<string, number>>();
  /** The waiting playlist operation in flight per process (#inTurn). */
  readonly #turns = new Map<ProcessEntry, Promise<void>>();
  #byStream = new Map<string, string>();
  #streamsOf = new Map<string, readonly string[]>();
  #table: DemandTableMessage = { t: 'table', playlists: [], segments: [] };
  #channel: FileDoorChannel | undefined;
  #offStreams: (() => void) | undefined;
  #offResources: (() => void) | undefined;
  #rebuildQueued = false;
  /** The waiting stream names last told to the stream table (`demandChanged` only when they change). */
  #waitingKey = '';
  /** What strangers may start (budget.ts); its state as last told to the door taps. */
  readonly #budget: DemandBudget;
  #budgetSent = '';
  readonly env: DemandEnv;

  constructor(d: HubDeps) {
    this.#d = d;
    this.#budget = new DemandBudget({ ...d.budget, fullRetrySeconds: Math.min(d.idleSeconds, 30) });
    this.env = {
      idleSeconds: d.idleSeconds,
      attached: (e) => this.#attached(e.id),
      viewers: (e, idleMs) => this.#viewerCount(e.id, idleMs),
      waiting: (e) => { this.#waitingChanged(); this.#inTurn(e, () => this.#writeWaiting(e)); },
      unarmed: (e) => { this.#waitingChanged(); this.#inTurn(e, () => this.#dropWaiting(e)); },
    };
  }

  /** Taps the file door and the stream table (setup: before the app listens, so every thread loads the module). */
  async open(): Promise<void> {
    this.#offStreams = this.#d.streams?.addDemandSource({
      demand: (name, from, waitMs) => this.#streamDemand(name, from, waitMs), waiting: () => this.#demandStreams('waiting'), running: () => this.#demandStreams('running'),
    });
    // the door taps learn when the machine goes over the budget or back under it
    this.#offResources = this.#d.resources?.budget.onChange(() => {
      const over = this.#d.resources!.budget.over;
      this.#d.log[over ? 'warn' : 'info']({ code: 'ONDEMAND_RESOURCES' },
        over ? 'the machine is over the resource budget: on-demand processes do not start' : 'the machine is under the resource budget again');
      this.#budgetChanged();
    });
    if (!this.#d.door) return;
    const ch = await this.#d.door.tap({ name: 'process-ondemand', url: siblingModule('./door-tap.ts', import.meta.url) });
    this.#channel = ch;
    ch.onMessage((raw) => {
      const m = raw as Partial<DemandHit> & { t?: string };
      if (m.t === 'hello') {
        ch.broadcast(this.#table);
        ch.broadcast(this.#budgetMessage());
      } else if (typeof m.id === 'string' && typeof m.remote === 'string') this.#hit(m.id, m.remote);
    });
    ch.broadcast(this.#table);
  }

  close(): void {
    this.#offStreams?.();
    this.#offResources?.();
    this.#channel?.close();
  }

  /** The processes changed: the table is built again (once per turn). */
  changed(): void {
    if (this.#rebuildQueued) return;
    this.#rebuildQueued = true;
    queueMicrotask(() => {
      this.#rebuildQueued = false;
      this.rebuild();
    });
  }

  rebuild(): void {
    const table: DemandTableMessage = { t: 'table', playlists: [], segments: [] };
    const byStream = new Map<string, string>();
    const streamsOf = new Map<string, readonly string[]>();
    for (const e of this.#d.entries()) {
      if (!e.onDemand) continue;
      const t = this.#targets(e);
      for (const h of t.hls) {
        table.playlists.push([demandKey(h.mount, h.playlist), e.id], [demandKey(h.mount, posix.join(h.dir, slateName(h.playlist))), e.id]);
        table.segments.push([demandKey(h.mount, h.dir), h.segments.source, e.id]);
      }
      for (const n of t.streams) byStream.set(n, e.id);
      streamsOf.set(e.id, t.streams);
    }
    this.#table = table;
    this.#byStream = byStream;
    this.#streamsOf = streamsOf;
    for (const id of this.#viewers.keys()) if (!streamsOf.has(id)) this.#viewers.delete(id);
    this.#channel?.broadcast(table);
    this.#waitingChanged();
  }

  #targets(e: ProcessEntry): DemandTargets {
    const outputs = e.resolution?.outputs;
    return outputs ? demandTargets(outputs, this.#d.filesystems()) : { hls: [], streams: [] };
  }

  #hit(id: string, remote: string): void {
    const e = this.#d.get(id);
    if (!e?.onDemand) return;
    // a copy in a thread answered before it heard the budget was used up: nothing starts for it
    const starts = e.demandWaiting;
    if (starts && (this.#budget.check(remote, this.#running()) !== undefined || this.#overResources(e))) return;
    let seen = this.#viewers.get(id);
    if (!seen) this.#viewers.set(id, (seen = new Map()));
    const key = clientKey(remote);
    const now = this.#d.clock.now();
    if (!seen.delete(key) && seen.size >= MAX_DEMAND_VIEWERS) forgetIdle(seen, now, this.#d.idleSeconds * 1000);
    if (seen.size < MAX_DEMAND_VIEWERS) seen.set(key, now);
    // only a start counts (a demand put off for a run that just failed starts nothing now)
    if (e.demand('hls') && starts && e.demandRunning) this.#budget.charge(remote);
    this.#waitingChanged();
  }

  /**
   * A stream reader asked for `name` (`from`: its address; none for a reader inside the service)
   * and waits `waitMs` for it: the process is not stopped as idle before that.
   */
  #streamDemand(name: string, from: string | undefined, waitMs = 0): boolean {
    const id = this.#byStream.get(name);
    const e = id === undefined ? undefined : this.#d.get(id);
    if (!e) return false;
    const starts = e.demandWaiting;
    if (starts && (this.#budget.check(from, this.#running()) !== undefined || this.#overResources(e))) return false;
    const ok = e.demand('stream', waitMs);
    if (ok && starts && e.demandRunning) this.#budget.charge(from);
    if (ok) this.#waitingChanged();
    return ok;
  }

  /** A demand would start `e` while the machine is over the resource budget: refused (event, log). */
  #overResources(e: ProcessEntry): boolean {
    return this.#d.resources?.demand(budgetSubject(e)) ?? false;
  }

  /** On-demand processes a demand started that run or start now. */
  #running(): number {
    let n = 0;
    for (const id of this.#streamsOf.keys()) if (this.#d.get(id)?.demandRunning) n++;
    return n;
  }

  /** The budget as the door taps need it: which processes wait, the total reached, clients at their budget. */
  #budgetMessage() {
    const waiting: string[] = [];
    for (const id of this.#streamsOf.keys()) if (this.#d.get(id)?.demandWaiting) waiting.push(id);
    return { ...this.#budget.message(waiting, this.#running()), resources: this.#d.resources?.budget.over ? RESOURCES_RETRY_SECONDS : 0 };
  }

  /**
   * Stream names of the on-demand processes a demand would start now, or (`running`) of those a
   * demand started (SRT admits their players in the handshake).
   */
  #demandStreams(which: 'waiting' | 'running'): string[] {
    const out: string[] = [];
    for (const [id, names] of this.#streamsOf) {
      const e = names.length > 0 ? this.#d.get(id) : undefined;
      if (e && (which === 'running' ? e.demandRunning : e.demandWaiting)) out.push(...names);
    }
    return out;
  }

  /** Tells the stream table when the waiting names changed (a process armed, started, stopped, changed). */
  #waitingChanged(): void {
    this.#budgetChanged();
    const key = `${this.#demandStreams('waiting').sort().join('\0')}\n${this.#demandStreams('running').sort().join('\0')}`;
    if (key === this.#waitingKey) return;
    this.#waitingKey = key;
    this.#d.streams?.demandChanged();
  }

  /** Tells the door taps the budget's state when it changed (on main at once, so the next request meets it). */
  #budgetChanged(): void {
    if (!this.#channel) return;
    const m = this.#budgetMessage();
    const text = JSON.stringify(m);
    if (text === this.#budgetSent) return;
    this.#budgetSent = text;
    this.#channel.broadcast(m);
  }

  #attached(id: string): number {
    let n = 0;
    for (const name of this.#streamsOf.get(id) ?? []) n += this.#d.streams?.get(name)?.readers.length ?? 0;
    return n;
  }

  #viewerCount(id: string, idleMs: number): number {
    const seen = this.#viewers.get(id);
    if (!seen) return 0;
    forgetIdle(seen, this.#d.clock.now(), idleMs);
    return seen.size;
  }

  /**
   * Runs the waiting playlist's writes and removals of one process one after the other: a `stop`
   * while the slate clip was still being encoded removed nothing, and the write that came after
   * put the waiting playlist up for a process that no longer waited.
   */
  #inTurn(e: ProcessEntry, op: () => Promise<void>): void {
    const next = (this.#turns.get(e) ?? Promise.resolve()).then(op);
    this.#turns.set(e, next);
    void next.finally(() => { if (this.#turns.get(e) === next) this.#turns.delete(e); });
  }

  /** Puts the waiting playlist (and its slate clip) where the process writes its playlist. */
  async #writeWaiting(e: ProcessEntry): Promise<void> {
    const hls = this.#targets(e).hls;
    if (hls.length === 0) return;
    try {
      const clip = await this.#d.slate.clip();
      // it may have started or stopped while the clip was made
      for (const h of hls) {
        if (!e.demandWaiting) continue;
        // where its maker may no longer write its playlist nothing is written for it (its start is refused too; the slate goes with the playlist)
        if (this.#d.mayWrite && !this.#d.mayWrite(e, posix.join(h.mount, h.playlist))) continue;
        await writeWaiting(h, clip, this.#d.clock.now());
      }
    } catch (err) {
      this.#d.log.warn({ err, process: e.id }, 'cannot write the waiting playlist of an on-demand process');
    }
  }

  /** Order `stop`: a waiting playlist would keep players asking for nothing, so it goes. */
  async #dropWaiting(e: ProcessEntry): Promise<void> {
    for (const h of this.#targets(e).hls) {
      try {
        const data = await h.fs.readFile(h.playlist);
        if (data && isWaiting(data)) await h.fs.deleteFile(h.playlist);
      } catch (err) {
        this.#d.log.warn({ err, process: e.id }, 'cannot remove the waiting playlist of an on-demand process');
      }
    }
  }
}

/** Whether a playlist is a waiting one (not ffmpeg's). */
export function isWaiting(data: Buffer | string): boolean {
  return data.toString().startsWith(`#EXTM3U\n${WAITING_MARK}\n`);
}

async function writeWaiting(h: HlsTarget, clip: Buffer, now: number): Promise<void> {
  const slate = posix.join(h.dir, slateName(h.playlist));
  const old = await h.fs.stat(slate);
  if (old?.size_bytes !== clip.length) await h.fs.writeFile(slate, clip);
  await h.fs.writeFile(h.playlist, Buffer.from(waitingPlaylist(slateName(h.playlist), now)));
}
