import type { KV, KvEntry, QueuedIterator } from 'nats';
import { clusterErrors, isWrongRevision } from './errors.ts';
import { encodeId, keyId } from './keys.ts';

/** A value with the KV revision it was read at: the revision a later `update` must name. */
export interface Revised<T> { value: T; revision: number }

export type KvChange<T> =
  | { type: 'add' | 'update'; id: string; value: T; revision: number }
  /** `revision`: of the delete marker (MAX_SAFE_INTEGER for a key found gone by a watcher restart). */
  | { type: 'delete'; id: string; revision: number };

/**
 * A table of JSON values in a KV bucket, one key per id (`<prefix>.` + the id in base64url,
 * `keys.ts`): the shared processes (`p.`) and IAM's users (`u.`). Every write is a compare-and-swap
 * (`create` for a new id, `update` with the revision read; a lost race throws
 * `clusterErrors.conflict`, 409) or a plain `put`. `watch` keeps an in-memory view (current values
 * first, then every change) and calls back per change. No HTTP here.
 */
export class KvTable<T> {
  readonly #kv: KV;
  readonly #prefix: string;
  readonly #what: string;
  #view = new Map<string, Revised<T>>();
  #iter: QueuedIterator<KvEntry> | undefined;
  #ready = false;
  #starting = false;
  /** Bumped by every start and stop: a start that a stop overtook drops its watcher. */
  #gen = 0;

  /** `prefix`: the keys' first token (no `.`); `what`: the values' name in errors ("process"). */
  constructor(kv: KV, prefix: string, what: string) {
    this.#kv = kv;
    this.#prefix = prefix;
    this.#what = what;
  }

  key(id: string): string { return `${this.#prefix}.${encodeId(id)}`; }

  async get(id: string): Promise<Revised<T> | undefined> {
    const e = await this.#kv.get(this.key(id));
    return e && e.operation === 'PUT' ? { value: e.json<T>(), revision: e.revision } : undefined;
  }

  /** Adds a value; a conflict when the id exists. Returns the new revision. */
  create(id: string, v: T): Promise<number> {
    return this.#cas(id, () => this.#kv.create(this.key(id), JSON.stringify(v)));
  }

  /** Replaces a value read at `revision`; a conflict when it changed (or went) since. */
  update(id: string, v: T, revision: number): Promise<number> {
    return this.#cas(id, () => this.#kv.update(this.key(id), JSON.stringify(v), revision));
  }

  /** Writes a value whatever is there (the last writer wins). */
  put(id: string, v: T): Promise<number> {
    return this.#kv.put(this.key(id), JSON.stringify(v));
  }

  /** Deletes a value; with `revision`, only if unchanged since it was read at it. */
  async delete(id: string, revision?: number): Promise<void> {
    const opts = revision === undefined ? undefined : { previousSeq: revision };
    await this.#cas(id, () => this.#kv.delete(this.key(id), opts));
  }

  async #cas<R>(id: string, op: () => Promise<R>): Promise<R> {
    try {
      return await op();
    } catch (err) {
      if (isWrongRevision(err)) throw clusterErrors.conflict(`${this.#what} ${id}`);
      throw err;
    }
  }

  /** The view the watcher keeps, by id (empty before `watch`). */
  list(): Revised<T>[] { return [...this.#view.values()]; }
  find(id: string): Revised<T> | undefined { return this.#view.get(id); }

  /**
   * Starts (or restarts, e.g. after a reconnect) the watcher; resolves once the current values
   * are in the view. A restart reports only what changed relative to the view it had.
   */
  async watch(onChange: (c: KvChange<T>) => void = () => {}): Promise<void> {
    this.stop();
    const gen = ++this.#gen;
    this.#starting = true;
    let ready!: () => void;
    const initialized = new Promise<void>((r) => { ready = r; });
    const seen = new Set<string>();
    let initial = true;
    const finish = (): void => {
      if (!initial) return;
      initial = false;
      this.#ready = true;
      // a key gone while no watcher ran: the restart's initial values lack it
      for (const id of [...this.#view.keys()]) if (!seen.has(id)) { this.#view.delete(id); onChange({ type: 'delete', id, revision: Number.MAX_SAFE_INTEGER }); }
      ready();
    };
    // the client signals "initialized" either in order within the stream of entries, or (when they
    // all arrived before the subscription returned) at once, before this loop consumed them: then
    // the entries queued at that moment are the current values
    let early = false;
    let inWatch = true;
    let it: QueuedIterator<KvEntry>;
    try {
      it = await this.#kv.watch({ key: `${this.#prefix}.>`, initializedFn: () => { if (inWatch) early = true; else finish(); } });
    } catch (err) {
      if (gen === this.#gen) this.#starting = false;
      throw err;
    } finally {
      inWatch = false;
    }
    if (gen !== this.#gen) { it.stop(); return; }
    this.#iter = it;
    this.#starting = false;
    let remaining = early ? it.getPending() : Infinity;
    if (remaining === 0) finish();
    void (async () => {
      try {
        for await (const e of it) {
          const id = keyId(this.#prefix, e.key);
          if (id !== undefined) {
            if (initial) seen.add(id);
            this.#apply(id, e, onChange);
          }
          if (--remaining === 0) finish();
        }
      } catch { /* a broken watcher is restarted by its owner */ } finally {
        if (this.#iter === it) { this.#iter = undefined; this.#ready = false; }
        ready();
      }
    })();
    await initialized;
  }

  /** A watcher runs or is being started. */
  get watching(): boolean { return this.#starting || this.#iter !== undefined; }
  /** True once the watcher delivered the current values: before that the view may lack entries. */
  get ready(): boolean { return this.#ready && this.#iter !== undefined; }

  #apply(id: string, e: KvEntry, onChange: (c: KvChange<T>) => void): void {
    const had = this.#view.get(id);
    if (e.operation !== 'PUT') {
      if (had) { this.#view.delete(id); onChange({ type: 'delete', id, revision: e.revision }); }
      return;
    }
    if (had && had.revision === e.revision) return;
    let value: T;
    try { value = e.json<T>(); } catch { return; }
    this.#view.set(id, { value, revision: e.revision });
    onChange({ type: had ? 'update' : 'add', id, value, revision: e.revision });
  }

  stop(): void {
    this.#gen++;
    this.#starting = false;
    this.#ready = false;
    this.#iter?.stop();
    this.#iter = undefined;
  }
}
