import type { ProcessOrder, ProcessRecord, ProcessReplication, ProcessWrite } from '../../sdk/index.ts';
import { badTextPath } from '../../sdk/index.ts';
import { dict, own, type StoredProcess } from './db-document.ts';
import { addStored, putStored, removeStored, replaceStored } from './db-changes.ts';
import { fromStoredConfig, mergeOnto, normalize, PROCESS_TYPES, shortId, toStoredConfig, type FullConfig } from './config-model.ts';
import { maxProcessesReason, processErrors } from './errors.ts';
import { checkId } from './safe-names.ts';
import { KeyedLock } from './keyed-lock.ts';
import { budgetSubject, ProcessEntry, type EntryTimes } from './process-entry.ts';
import { preSaveEvent, recordOf } from './records.ts';
import { applyRecord, dropRecord, rerun, type ReplicaPort } from './replica.ts';
import type { ProcessConfig, ProcessConfigUpdate } from './schema.ts';
import type { ManagerOptions } from './manager-options.ts';

export type { ManagerOptions } from './manager-options.ts';
export type Command = 'start' | 'stop' | 'restart' | 'reload';
/** A caller's verdict on a new entry (what its command names): why it may not be made, or undefined. */
export type Admit = (e: ProcessEntry) => string | undefined;
/** An access plugin's part in a create or update: its verdict on the command, and who asked (kept as the process's maker). */
export interface Authority { admit: Admit; maker: string | undefined; since?: number }
const COMMANDS: ReadonlySet<string> = new Set(['start', 'stop', 'restart', 'reload']);

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * All processes: add, replace, delete and command them, keep db.json in step (saved before a
 * change is acknowledged), restore them at start. Work on one process is serialised.
 */
export class ProcessManager {
  readonly #entries = new Map<string, ProcessEntry>();
  readonly #ffversions = new Map<string, string>();
  readonly #lock = new KeyedLock();
  readonly #o: ManagerOptions;
  #replication: ProcessReplication | undefined;
  readonly #port: ReplicaPort;

  constructor(o: ManagerOptions) {
    this.#o = o;
    this.#port = {
      entries: this.#entries, ffversions: this.#ffversions, lock: this.#lock, o,
      stored: (e, ffversion) => this.#stored(e, ffversion), runs: (id) => this.runs(id),
    };
  }

  get(id: string): ProcessEntry | undefined { return this.#entries.get(id); }
  values(): IterableIterator<ProcessEntry> { return this.#entries.values(); }

  /** Shares every change through `r` before it is acknowledged; runs only what `r.runs` allows. */
  attach(r: ProcessReplication): void {
    if (this.#replication) throw new Error('a process replication is attached already');
    this.#replication = r;
  }

  /** Whether this node runs `id` when its order is `start` (always, without a replication). */
  runs(id: string): boolean { return this.#replication?.runs(id) ?? true; }

  /** Every process in its stored form. */
  records(): ProcessRecord[] {
    return [...this.#entries.values()].map((e) => recordOf(this.#stored(e), this.metadata(e.id)));
  }

  /** A change made on another node (see `replica.ts`). */
  apply(r: ProcessRecord): Promise<void> { return applyRecord(this.#port, r); }
  drop(id: string): Promise<void> { return dropRecord(this.#port, id); }
  rerun(id: string): Promise<void> { return rerun(this.#port, id); }

  /** Another process's definition, for input references. */
  lookup = (id: string): FullConfig | undefined => ((c) => (c && (this.#referable?.(c) ?? true) ? c : undefined))(this.#entries.get(id)?.config);

  /** While a caller's create or update resolves: the processes its inputs may reference (others are unknown to it). */
  #referable: ((other: FullConfig) => boolean) | undefined;

  /**
   * Loads every stored process, once every plugin is ready (their placeholders exist). One that
   * does not resolve is kept as it is stored (never dropped from db.json), listed with the
   * reason in its state and log, and resolved again when next started or reloaded.
   */
  restore(): void {
    for (const [key, sp] of Object.entries(this.#o.db.data.process)) {
      const stored = (sp?.config ?? {}) as Record<string, unknown>;
      const c = fromStoredConfig({ ...stored, id: typeof stored.id === 'string' && stored.id.trim() ? stored.id : key });
      const times: EntryTimes = {
        createdAt: Number(sp?.created_at) || nowSeconds(),
        updatedAt: Number(sp?.updated_at) || nowSeconds(),
        order: sp?.order === 'start' ? 'start' : 'stop',
        maker: typeof sp?.maker === 'string' ? sp.maker : undefined,
        makerSince: Number.isSafeInteger(sp?.maker_since) ? sp!.maker_since : undefined,
      };
      const e = new ProcessEntry(c, times, this.#o.entryEnv);
      this.#entries.set(c.id, e);
      this.#ffversions.set(c.id, typeof stored.ffversion === 'string' ? stored.ffversion : '');
      if (key !== c.id) delete this.#o.db.data.process[key];
      this.#record(e);
    }
    // References need every process loaded before any is resolved.
    for (const e of this.#entries.values()) {
      const why = e.refresh();
      if (why !== undefined) this.#o.log.warn({ process: e.id, reason: why }, 'stored process is invalid');
      else this.#o.cleanup.set(e.id, e.resolution!.cleanup);
    }
  }

  /**
   * Once the listener is bound: order `start` runs (each spawn resolves placeholders afresh, so
   * `{memfs}` has the real port); the others re-resolve when next shown.
   */
  async startAll(): Promise<void> {
    await this.#o.beforeStart?.().catch((err: unknown) => this.#o.log.error({ err }, 'beforeStart failed'));
    const starting: Promise<void>[] = [];
    for (const e of this.#entries.values()) {
      e.outdated();
      if (e.order === 'start' && e.valid && this.runs(e.id)) starting.push(e.start());
    }
    await Promise.all(starting);
  }

  /** Stops every child, keeping their order so they come back at the next start. */
  async shutdown(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.destroy()));
    this.#o.cleanup.stop();
  }

  /** `referable`: the processes the caller may read (an input referencing another is as if it did not exist). */
  async add(body: ProcessConfig, referable?: (other: FullConfig) => boolean, authority?: Authority): Promise<ProcessEntry> {
    const c = this.#validateBody({ ...body, id: body.id ?? shortId(), autostart: body.autostart ?? true });
    const ffversion = await this.#o.ffversion();
    return this.#lock.run([c.id], async () => {
      if (this.#entries.has(c.id)) throw processErrors.invalidConfig('process already exists');
      const order: ProcessOrder = c.autostart ? 'start' : 'stop';
      if (order === 'start') this.#checkMax(processErrors.invalidConfig);
      const now = nowSeconds();
      const e = this.#create(c, { createdAt: now, updatedAt: now, order, maker: authority?.maker, makerSince: authority?.since }, referable);
      if (!e.valid) {
        void e.destroy();
        throw processErrors.invalidConfig(e.invalidReason!);
      }
      this.#admit(e, referable, authority?.admit);
      const refused = await this.#o.preSave?.(preSaveEvent(c));
      if (refused) {
        void e.destroy();
        throw processErrors.invalidConfig(refused);
      }
      // what the taps reserved (ports) shows in the command from now on
      e.outdated();
      this.#entries.set(c.id, e);
      this.#ffversions.set(c.id, ffversion);
      try {
        const sp = this.#stored(e);
        await this.#share({ kind: 'put', record: recordOf(sp, null), created: true });
        await this.#o.db.commit(() => addStored(this.#o.db.data, sp));
      } catch (err) {
        this.#entries.delete(c.id);
        this.#ffversions.delete(c.id);
        void e.destroy();
        throw err;
      }
      this.#o.cleanup.set(c.id, e.resolution!.cleanup);
      this.#o.onAdd?.(c.id, c.reference);
      if (order === 'start' && this.runs(c.id)) await e.start();
      return e;
    });
  }

  /** PUT: the body decoded onto the current config; the old process is replaced (reference 4.4.4). */
  async update(id: string, body: ProcessConfigUpdate, referable?: (other: FullConfig) => boolean, authority?: Authority): Promise<ProcessEntry> {
    const current = this.#entries.get(id);
    if (!current) throw processErrors.updateNotFound(id);
    const c = this.#validateBody(mergeOnto(current.apiConfig, body) as ProcessConfig, processErrors.cantUpdate);
    return this.#lock.run([id, c.id], async () => {
      const old = this.#entries.get(id);
      if (!old) throw processErrors.notFound();
      if (c.id !== id && this.#entries.has(c.id)) throw processErrors.cantUpdate('process already exists');
      const [maker, makerSince] = authority ? [authority.maker, authority.since] : [old.maker, old.makerSince];
      const e = this.#create(c, { createdAt: old.createdAt, updatedAt: nowSeconds(), order: old.order, maker, makerSince }, referable);
      if (!e.valid) {
        void e.destroy();
        throw processErrors.cantUpdate(e.invalidReason!);
      }
      this.#admit(e, referable, authority?.admit);
      const refused = await this.#o.preSave?.(preSaveEvent(c, id));
      if (refused) {
        void e.destroy();
        throw processErrors.cantUpdate(refused);
      }
      e.outdated();
      const ffversion = this.#ffversions.get(id) ?? '';
      // saved before the old process is touched: a change that cannot be saved leaves it running
      try {
        const sp = this.#stored(e, ffversion);
        await this.#share({ kind: 'put', record: recordOf(sp, this.metadata(id)), previousId: id === c.id ? undefined : id });
        await this.#o.db.commit(() => replaceStored(this.#o.db.data, id, sp));
      } catch (err) {
        void e.destroy();
        throw err;
      }
      await old.destroy();
      await this.#o.cleanup.unset(id, true);
      e.monitor.adoptHistory(old.monitor);
      this.#entries.delete(id);
      this.#ffversions.delete(id);
      this.#entries.set(c.id, e);
      this.#ffversions.set(c.id, ffversion);
      this.#o.cleanup.set(c.id, e.resolution!.cleanup);
      this.#o.onUpdate?.(c.id, c.reference, id);
      if (e.order === 'start' && this.runs(c.id)) await e.start();
      return e;
    });
  }

  async remove(id: string): Promise<void> {
    await this.#lock.run([id], async () => {
      const e = this.#entries.get(id);
      if (!e) throw processErrors.notFound();
      // saved before the process is stopped: a delete that cannot be saved changes nothing
      await this.#share({ kind: 'delete', id });
      await this.#o.db.commit(() => removeStored(this.#o.db.data, id));
      await e.destroy();
      this.#entries.delete(id);
      this.#ffversions.delete(id);
      await this.#o.cleanup.unset(id, true);
      await this.#o.onDelete(id, e.config.reference);
    });
  }

  async command(id: string, command: string): Promise<void> {
    if (!COMMANDS.has(command)) throw processErrors.unknownCommand();
    await this.#lock.run([id], async () => {
      const e = this.#entries.get(id);
      if (!e) throw processErrors.notFound();
      switch (command as Command) {
        case 'start':
          // the cause may be fixed by now (a plugin back, a path inside the root again)
          if (!e.valid) this.#revalidate(e);
          // a start that would spawn now meets the resource budget first (503, nothing changes)
          if (!e.active && !e.onDemand && !e.config.scheduler && this.runs(id)) this.#o.entryEnv.budget?.command(budgetSubject(e));
          if (e.order !== 'start') {
            this.#checkMax(processErrors.commandFailed);
            await this.#setOrder(e, 'start');
          }
          // in a cluster the owner starts it (it sees the order change)
          return this.runs(id) ? e.start() : undefined;
        case 'stop':
          if (e.order !== 'stop') await this.#setOrder(e, 'stop');
          return e.stop();
        case 'restart':
          // Unlike the original (quirk 17.4), the process comes back whether or not `reconnect` is set.
          if (e.order !== 'start' || !this.runs(id)) return undefined;
          if (!e.valid) this.#revalidate(e);
          return e.restart();
        case 'reload': {
          const why = e.refresh();
          if (why !== undefined) {
            await e.stop();
            throw processErrors.commandFailed(why);
          }
          this.#o.cleanup.set(e.id, e.resolution!.cleanup);
          await this.#o.db.save();
          return e.order === 'start' && this.runs(id) ? e.restart() : undefined;
        }
      }
    });
  }

  /** Sets (or with `null` removes) one metadata key of a process; the value is saved before the answer. */
  async setMetadata(id: string, key: string, value: unknown): Promise<void> {
    if (!this.#entries.has(id)) throw processErrors.notFound();
    const all = this.#o.db.data.metadata.process;
    const before = own(all, id) ?? null;
    // a fresh object per change: db.json caches each stored object's text by identity
    const md = dict(before);
    if (value === null) delete md[key];
    else md[key] = value;
    const next = Object.keys(md).length ? md : null;
    // serialised before it is applied: a value db.json cannot hold is refused, nothing changes
    this.#o.storable(next);
    this.#o.metadataBudget?.checkProcess(id, next);
    const e = this.#entries.get(id)!;
    await this.#share({ kind: 'put', record: recordOf(this.#stored(e), next) });
    await this.#o.db.commit(() => {
      all[id] = next;
      return () => { if (this.#entries.has(id)) all[id] = before; };
    });
  }

  metadata(id: string): Record<string, unknown> | null {
    return own(this.#o.db.data.metadata.process, id) ?? null;
  }

  #validateBody(body: ProcessConfig, fail = processErrors.invalidConfig): FullConfig {
    if (body.type !== undefined && !PROCESS_TYPES.includes(body.type)) throw processErrors.unsupportedType();
    if (!body.input?.length || !body.output?.length) throw processErrors.noInputOutput();
    const c = normalize(body);
    if (c.id === '') throw fail('an empty ID is not allowed');
    checkId(c.id);
    // an argument with NUL cannot be given to ffmpeg (the start failed, naming an internal index)
    const bad = badTextPath(c);
    if (bad !== undefined) throw fail(`${bad} holds a NUL character or a lone UTF-16 surrogate`);
    return c;
  }

  /** Resolves an invalid entry again; throws the API's refusal when it still does not resolve. */
  #revalidate(e: ProcessEntry): void {
    if (e.refresh() !== undefined) throw processErrors.commandFailed('invalid process definition');
    this.#o.cleanup.set(e.id, e.resolution!.cleanup);
  }

  #checkMax(fail: (reason: string) => Error): void {
    const max = this.#o.maxProcesses;
    if (max <= 0) return;
    let n = 0;
    for (const e of this.#entries.values()) if (e.order === 'start') n++;
    if (n >= max) throw fail(maxProcessesReason(max));
  }

  /** Changes and saves the order; when the write fails the old order is back (and the error thrown). */
  async #setOrder(e: ProcessEntry, order: ProcessOrder): Promise<void> {
    const before = e.order;
    e.order = order;
    let sp: StoredProcess;
    try {
      sp = this.#stored(e);
    } catch (err) {
      e.order = before;
      throw err;
    }
    try {
      await this.#share({ kind: 'put', record: recordOf(sp, this.metadata(e.id)) });
    } catch (err) {
      e.order = before;
      throw err;
    }
    await this.#o.db.commit(() => {
      const undo = putStored(this.#o.db.data, sp);
      return () => {
        e.order = before;
        undo();
      };
    });
  }

  /** The shared store's verdict on a change (none without a replication). */
  async #share(change: ProcessWrite): Promise<void> {
    if (this.#replication) await this.#replication.write(change);
  }

  /** A new entry, resolved (check `valid`). */
  #create(c: FullConfig, times: EntryTimes, referable?: (other: FullConfig) => boolean): ProcessEntry {
    this.#referable = referable;
    try {
      const e = new ProcessEntry(c, times, this.#o.entryEnv);
      e.refresh();
      return e;
    } finally {
      this.#referable = undefined;
    }
  }

  /** The caller's verdict on what a new entry's command names (its references resolved as for its creation); a refusal destroys it. */
  #admit(e: ProcessEntry, referable: ((other: FullConfig) => boolean) | undefined, admit: Admit | undefined): void {
    if (!admit) return;
    this.#referable = referable;
    let refused: string | undefined;
    try {
      refused = admit(e);
    } finally {
      this.#referable = undefined;
    }
    if (refused === undefined) return;
    void e.destroy();
    throw processErrors.forbiddenUse(refused);
  }

  /** Writes the entry's stored form into db.data (the caller saves). */
  #record(e: ProcessEntry): void {
    this.#o.db.data.process[e.id] = this.#stored(e);
  }

  /** The entry's stored form, refused (400) before anything changes when db.json cannot hold it. */
  #stored(e: ProcessEntry, ffversion = this.#ffversions.get(e.id) ?? ''): StoredProcess {
    const sp: StoredProcess = {
      id: e.id,
      reference: e.config.reference,
      created_at: e.createdAt,
      updated_at: e.updatedAt,
      order: e.order,
      config: toStoredConfig(e.config, ffversion),
      ...(e.maker === undefined ? {} : { maker: e.maker }),
      ...(e.maker === undefined || e.makerSince === e.updatedAt ? {} : { maker_since: e.makerSince }),
    };
    this.#o.storable(sp, 2);
    return sp;
  }
}
