import type { Logger } from 'pino';
import {
  globMatcher, isApiError, presentDevices, type PluginState, type ProcessesService, type StateDocument, type StreamTable,
} from '../../sdk/index.ts';
import type { LadderRendition, LaddersService } from './api.ts';
import { encoderFor, ladderProcess, ladderProcessId, LADDER_REFERENCE, streamOfProcess, type CommandOptions } from './command.ts';
import { laddersErrors } from './errors.ts';
import { fitRungs, knownSettings, renditionsFor, resolveLadder, type Ladder, type SourceMedia } from './presets.ts';
import type { LadderEntry, LadderSettings, LaddersConfig, LadderView } from './schema.ts';

export interface LaddersDeps {
  processes: ProcessesService;
  streams: StreamTable;
  state: PluginState;
  log: Logger;
  config: LaddersConfig;
  /** The hardware encoders' device nodes present (default: the SDK's `presentDevices`, which looks for them). */
  devices?: () => ReadonlySet<string>;
  now?: () => number;
}

/** Whether a caller may replace or remove what `maker` made at `since` (unix seconds): `httpHooksRef.mayChange`. */
export type MayChange = (maker: string | undefined, since: number) => boolean;

/** An API ladder as `ladders.json` keeps it: its settings and its maker. */
type StoredLadder = LadderEntry & { maker?: string; made_at?: number };
interface Stored { ladders: StoredLadder[] }

/** Stream names whose renditions `renditionsOf` keeps at once. */
const MEMO_MAX = 1000;
/**
 * How long after its start an FLV source that sent one codec header only is taken to carry that
 * kind alone (publishers send both headers with their first packets).
 */
export const MEDIA_GRACE_MS = 2000;

/** A ladder with its pattern compiled once. */
interface Held { ladder: Ladder; match?: (name: string) => boolean }

/**
 * The ladders (the config file's, read-only, then the API's, stored in `ladders.json`) and their
 * processes in the engine: one per exact stream while its ladder exists, one per live stream a
 * pattern matches (kept `linger_seconds` after the stream ended). `reconcile` makes the engine's
 * ladder processes what the ladders say, one run at a time.
 */
export class Ladders implements LaddersService {
  readonly #d: LaddersDeps;
  readonly #now: () => number;
  readonly #cmd: CommandOptions;
  readonly #config: Held[];
  readonly #api = new Map<string, Held>();
  readonly #renditions = new Map<string, readonly LadderRendition[] | undefined>();
  #doc!: StateDocument<Stored>;
  /** Pattern processes: when their stream was last seen live (clock ms). */
  readonly #seen = new Map<string, number>();
  /** Why a ladder's process was refused by the engine (and whether for its maker's policies), by ladder id. */
  readonly #errors = new Map<string, { reason: string; forbidden: boolean }>();
  /**
   * Live streams a pattern ladder matches whose process its maker may not have (403), with why, by
   * stream then ladder id: such a ladder does not claim the stream (the next one matching does).
   * Kept while the stream is live and the ladder unchanged.
   */
  readonly #refused = new Map<string, Map<string, string>>();
  /** The media each laddered source was last seen to carry (kept while it is not live). */
  readonly #media = new Map<string, SourceMedia>();
  #queue: Promise<unknown> = Promise.resolve();
  #pending = false;
  #timer: NodeJS.Timeout | undefined;
  /** When `#timer` fires (clock ms). */
  #due = 0;
  #closed = false;

  constructor(d: LaddersDeps, configLadders: Ladder[]) {
    this.#d = d;
    this.#now = d.now ?? Date.now;
    this.#cmd = { encoder: d.config.encoder, preset: d.config.preset, idleSeconds: d.config.idle_seconds };
    this.#config = configLadders.map((l) => held(l));
  }

  /** Opens the stored ladders (one that no longer resolves is logged and left out). */
  async open(): Promise<void> {
    await this.#chooseEncoder();
    this.#doc = await this.#d.state.open<Stored>('ladders', { init: () => ({ ladders: [] }) });
    for (const e of this.#doc.data.ladders) {
      try {
        this.#setApi(e.id, held(resolveLadder(e.id, e, 'api'), e.maker === undefined ? undefined : { user: e.maker, since: e.made_at ?? Math.floor(this.#now() / 1000) }));
      } catch (err) {
        this.#d.log.warn({ ladder: e.id, err }, 'stored ladder is invalid; left out');
      }
    }
    // processes of pattern ladders restored from db.json: their streams get the linger time to come back
    const now = this.#now();
    for (const p of this.#d.processes.list()) if (p.reference === LADDER_REFERENCE) this.#seen.set(p.id, now);
  }

  /**
   * `ladders.encoder` for this machine: `auto` is a hardware encoder the skills list whose device
   * is present (NVENC, Quick Sync, VAAPI), else libx264; a named one the machine cannot run is
   * kept (its processes fail and say why) and logged.
   */
  async #chooseEncoder(): Promise<void> {
    const want = this.#d.config.encoder;
    const skills = await this.#d.processes.encoderSkills().catch(() => undefined);
    const chosen = encoderFor(want, skills, (this.#d.devices ?? presentDevices)());
    if (chosen.problem) this.#d.log.warn({ encoder: want, reason: chosen.problem }, `ladders: encoder ${want} cannot run here`);
    this.#cmd.encoder = chosen.encoder;
    this.#d.log.info({ encoder: chosen.encoder, configured: want }, `ladders: rungs encoded with ${chosen.encoder}`);
  }

  #all(): Held[] { return [...this.#config, ...this.#api.values()]; }

  /** The ladder of `stream`: its exact one, else the first pattern matching it (never for a rendition). */
  ladderFor(stream: string): Ladder | undefined {
    const all = this.#all();
    const exact = all.find((h) => h.ladder.stream === stream);
    if (exact) return exact.ladder;
    if (this.#isRendition(stream)) return undefined;
    const refused = this.#refused.get(stream);
    return all.find((h) => h.match?.(stream) && !refused?.has(h.ladder.id))?.ladder;
  }

  /** Whether `name` is `<S>/<rung>` of a ladder that is (or would be) for `S`. */
  #isRendition(name: string): boolean {
    const cut = name.lastIndexOf('/');
    if (cut <= 0) return false;
    const parent = name.slice(0, cut);
    const rung = name.slice(cut + 1);
    return this.#all().some((h) => (h.ladder.stream === parent || h.match?.(parent)) && h.ladder.rungs.some((r) => r.name === rung));
  }

  /**
   * Kept per stream until the ladders change: the LL-HLS plugin asks on every playlist request
   * (its rendition reports). At most `MEMO_MAX` names (they come from clients' requests).
   */
  renditionsOf(stream: string): readonly LadderRendition[] | undefined {
    if (this.#renditions.has(stream)) return this.#renditions.get(stream);
    const l = this.ladderFor(stream);
    const fitted = l && this.#fitted(l, stream);
    // a source none of whose rungs it can feed plays as itself
    const r = fitted && fitted.rungs.length > 0 ? renditionsFor(fitted, stream) : undefined;
    if (this.#renditions.size >= MEMO_MAX) this.#renditions.clear();
    this.#renditions.set(stream, r);
    return r;
  }

  /** Sets (or, undefined, removes) an API ladder; what `renditionsOf` kept is forgotten. */
  #setApi(id: string, h: Held | undefined): void {
    if (h) this.#api.set(id, h);
    else this.#api.delete(id);
    this.#renditions.clear();
    // its refusals go (it may be another maker's now); the others' stand, so the streams they left stay where they are
    for (const m of this.#refused.values()) m.delete(id);
  }

  /** Runs `fn` after the changes before it. */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Asks for a reconcile (coalesced: one waits at most). */
  changed(): void {
    if (this.#pending || this.#closed) return;
    this.#pending = true;
    void this.#serial(async () => {
      this.#pending = false;
      await this.#reconcile();
    }).catch((err: unknown) => this.#d.log.error({ err }, 'ladders: reconcile failed'));
  }

  /**
   * Which process each stream should have: exact ladders always, patterns while live or
   * lingering; each with the rungs its source can feed (none: no process, the source plays as itself).
   */
  #desired(): Map<string, { ladder: Ladder; stream: string }> {
    const laddered = new Map<string, { ladder: Ladder; stream: string }>();
    for (const h of this.#all()) if (h.ladder.stream) laddered.set(ladderProcessId(h.ladder.stream), { ladder: h.ladder, stream: h.ladder.stream });
    const now = this.#now();
    for (const s of this.#d.streams.list()) {
      const l = this.ladderFor(s.name);
      if (!l?.pattern) continue;
      const id = ladderProcessId(s.name);
      this.#seen.set(id, now);
      laddered.set(id, { ladder: l, stream: s.name });
    }
    const lingerMs = this.#d.config.linger_seconds * 1000;
    for (const p of this.#d.processes.list()) {
      if (p.reference !== LADDER_REFERENCE || laddered.has(p.id)) continue;
      const stream = streamOfProcess(p.inputs[0]?.address);
      const l = stream === undefined ? undefined : this.ladderFor(stream);
      const seen = this.#seen.get(p.id);
      if (!l?.pattern || seen === undefined || now - seen >= lingerMs) continue;
      laddered.set(p.id, { ladder: l, stream: stream! });
      this.#arm(seen + lingerMs - now);
    }
    const streams = new Set<string>();
    const want = new Map<string, { ladder: Ladder; stream: string }>();
    for (const [id, { ladder, stream }] of laddered) {
      streams.add(stream);
      this.#learn(ladder, stream);
      const fitted = this.#fitted(ladder, stream);
      if (fitted.rungs.length > 0) want.set(id, { ladder: fitted, stream });
    }
    // bounded by the live streams and the lingering processes (a source no rung fits has neither)
    for (const name of this.#media.keys()) if (!streams.has(name)) this.#media.delete(name);
    for (const name of this.#refused.keys()) if (!this.#d.streams.get(name)) this.#refused.delete(name);
    for (const id of this.#seen.keys()) if (!laddered.has(id)) this.#seen.delete(id);
    return want;
  }

  /** `ladder` with the rungs its source can feed (every rung while what it carries is not known). */
  #fitted(ladder: Ladder, stream: string): Ladder {
    const media = this.#media.get(stream);
    return media ? { ...ladder, rungs: fitRungs(ladder.rungs, media) } : ladder;
  }

  /**
   * Learns what live `stream` carries from the table: once known, or `MEDIA_GRACE_MS` after its
   * start with one kind seen (a reconcile is asked for then). A change forgets the renditions
   * `renditionsOf` kept, and is logged when it leaves rungs out.
   */
  #learn(ladder: Ladder, stream: string): void {
    const info = this.#d.streams.get(stream);
    if (!info) return;
    const { video, audio, known } = info.media;
    const age = this.#now() - info.since;
    if (!known && age < MEDIA_GRACE_MS) return this.#arm(MEDIA_GRACE_MS - age);
    if (!known && !video && !audio) return;
    const before = this.#media.get(stream);
    if (before?.video === video && before.audio === audio) return;
    this.#media.set(stream, { video, audio });
    this.#renditions.clear();
    const left = ladder.rungs.length - fitRungs(ladder.rungs, { video, audio }).length;
    if (left > 0) this.#d.log.info({ ladder: ladder.id, stream, video, audio }, `ladder source carries no ${video ? 'audio' : 'video'}: ${left} rung(s) left out`);
  }

  /** A reconcile in `ms` (the first lingering process due, a source's media known), unless one comes sooner. */
  #arm(ms: number): void {
    if (this.#closed) return;
    const wait = Math.max(ms, 0) + 50;
    const due = this.#now() + wait;
    if (this.#timer && this.#due <= due) return;
    clearTimeout(this.#timer);
    this.#due = due;
    this.#timer = setTimeout(() => { this.#timer = undefined; this.changed(); }, wait);
    this.#timer.unref();
  }

  /** `trying`: an exact ladder being put, whose refusal puts the one before back (its process stays meanwhile). */
  async #reconcile(trying?: string): Promise<void> {
    if (this.#closed) return;
    const want = this.#desired();
    this.#errors.clear();
    // a process its ladder's maker may not have goes (one of a ladder another user replaced, or from before makers)
    const forbidden = new Set<string>();
    for (const [id, { ladder, stream }] of want) {
      try {
        await this.#d.processes.put(ladderProcess(ladder, stream, this.#cmd, this.#media.get(stream)), ladder.maker?.user, ladder.maker?.since);
      } catch (err) {
        const reason = isApiError(err) ? err.details.join('; ') || err.message : String(err);
        this.#errors.set(ladder.id, { reason, forbidden: isApiError(err) && err.status === 403 });
        if (isApiError(err) && err.status === 403 && ladder.id !== trying) forbidden.add(id);
        // a pattern's maker may not have this stream: the next ladder matching it may (a reconcile after this one)
        if (isApiError(err) && err.status === 403 && ladder.pattern !== undefined) this.#refuse(stream, ladder.id, reason);
        this.#d.log.warn({ ladder: ladder.id, process: id, reason }, 'ladder process refused');
      }
    }
    for (const p of this.#d.processes.list()) {
      if (p.reference !== LADDER_REFERENCE || (want.has(p.id) && !forbidden.has(p.id))) continue;
      this.#seen.delete(p.id);
      await this.#d.processes.remove(p.id).catch((err: unknown) => this.#d.log.warn({ process: p.id, err }, 'ladder process not removed'));
    }
  }

  /** `ladder` does not claim live `stream` (its maker may not have its process), and the others matching it are tried. */
  #refuse(stream: string, ladder: string, reason: string): void {
    const m = this.#refused.get(stream) ?? new Map<string, string>();
    this.#refused.set(stream, m.set(ladder, reason));
    this.#renditions.clear();
    this.changed();
  }

  /**
   * Creates or replaces an API ladder for `maker` (the caller, under an access plugin: its processes
   * are held to the caller's policies); true when it is new. `may`: whether the caller may replace
   * the ladder there is (its maker and time), asked in turn with the other writes.
   */
  put(id: string, s: LadderSettings, maker?: string, may?: MayChange): Promise<boolean> {
    const ladder = resolveLadder(id, s, 'api');
    return this.#serial(async () => {
      if (this.#config.some((h) => h.ladder.id === id)) throw laddersErrors.fromConfig(id);
      const old = this.#api.get(id);
      if (!old && this.#all().length >= this.#d.config.max_ladders) throw laddersErrors.limit(this.#d.config.max_ladders);
      const other = this.#all().find((h) => h.ladder.id !== id && (ladder.stream ? h.ladder.stream === ladder.stream : h.ladder.pattern === ladder.pattern));
      if (other) throw laddersErrors.taken(ladder.stream ? `stream '${ladder.stream}'` : `pattern '${ladder.pattern}'`, other.ladder.id);
      const before = this.#doc.data.ladders.find((e) => e.id === id);
      if (before) this.#mayChange(id, before, may);
      const settings: StoredLadder = { id, ...knownSettings(s) };
      // the same ladder from the same maker keeps its time: nothing changes (its processes are not replaced for it)
      const same = before?.maker === maker && before?.made_at !== undefined && JSON.stringify({ ...before, maker: undefined, made_at: undefined }) === JSON.stringify(settings);
      const since = same ? before!.made_at! : Math.floor(this.#now() / 1000);
      if (maker !== undefined) ladder.maker = { user: maker, since };
      await this.#store(id, maker === undefined ? settings : { ...settings, maker, made_at: since });
      this.#setApi(id, held(ladder));
      await this.#reconcile(ladder.stream ? id : undefined);
      const refused = ladder.stream ? this.#errors.get(id) : undefined;
      if (refused !== undefined) {
        // an exact ladder whose process cannot exist is not kept
        await this.#store(id, before);
        this.#setApi(id, old);
        await this.#reconcile();
        throw refused.forbidden ? laddersErrors.forbidden(refused.reason) : laddersErrors.process(refused.reason);
      }
      return !old;
    });
  }

  /** Refuses a change of the stored ladder `id` its caller may not make (a ladder without a time: made now, as at load). */
  #mayChange(id: string, before: StoredLadder, may: MayChange | undefined): void {
    if (may && !may(before.maker, before.made_at ?? Math.floor(this.#now() / 1000))) throw laddersErrors.notYours(id);
  }

  /** Writes (or with undefined removes) the stored entry of `id`, atomically, before the answer. */
  async #store(id: string, entry: StoredLadder | undefined): Promise<void> {
    const list = this.#doc.data.ladders;
    await this.#doc.commit(() => {
      const i = list.findIndex((e) => e.id === id);
      const before = i >= 0 ? list[i] : undefined;
      if (entry && i >= 0) list[i] = entry;
      else if (entry) list.push(entry);
      else if (i >= 0) list.splice(i, 1);
      return () => {
        const j = list.findIndex((e) => e.id === id);
        if (j >= 0) list.splice(j, 1);
        if (before) list.splice(i, 0, before);
      };
    });
  }

  /** Deletes an API ladder and its processes (`may`: as for `put`). */
  delete(id: string, may?: MayChange): Promise<void> {
    return this.#serial(async () => {
      if (this.#config.some((h) => h.ladder.id === id)) throw laddersErrors.fromConfig(id);
      const before = this.#doc.data.ladders.find((e) => e.id === id);
      if (!this.#api.has(id) || !before) throw laddersErrors.notFound(id);
      this.#mayChange(id, before, may);
      await this.#store(id, undefined);
      this.#setApi(id, undefined);
      await this.#reconcile();
    });
  }

  view(id: string): LadderView {
    const h = this.#all().find((x) => x.ladder.id === id);
    if (!h) throw laddersErrors.notFound(id);
    const l = h.ladder;
    const processes = this.#d.processes.list().filter((p) => p.reference === LADDER_REFERENCE).flatMap((p) => {
      const stream = streamOfProcess(p.inputs[0]?.address);
      return stream !== undefined && this.ladderFor(stream)?.id === id ? [{ id: p.id, stream, exec: p.exec || 'failed' }] : [];
    });
    const v: LadderView = {
      id, ...(l.stream === undefined ? { pattern: l.pattern! } : { stream: l.stream }), rungs: l.rungs.map((r) => ({ ...r })),
      gop_seconds: l.gop_seconds, idle_seconds: l.idle_seconds || this.#d.config.idle_seconds, limits: { ...l.limits }, source: l.source, processes,
    };
    const error = this.#errors.get(id)?.reason ?? [...this.#refused.values()].find((m) => m.has(id))?.get(id);
    if (error !== undefined) v.error = error;
    return v;
  }

  list(): LadderView[] {
    return this.#all().map((h) => this.view(h.ladder.id));
  }

  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
  }
}

function held(ladder: Ladder, maker?: Ladder['maker']): Held {
  if (maker !== undefined) ladder.maker = maker;
  return ladder.pattern === undefined ? { ladder } : { ladder, match: globMatcher(ladder.pattern) };
}
