import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { BootError, writeFileAtomic, type StateDocument } from '../../sdk/index.ts';
import type { StateDocumentOptions } from '../../sdk/state.ts';
import { removeStaleTemps } from './stale-temps.ts';

/** A commit waiting for its write: how to undo it, and the error once a write failed. */
interface Change {
  undo: (() => void) | undefined;
  failed: Error | undefined;
}

const pretty = (data: unknown) => JSON.stringify(data, null, 4) + '\n';

/**
 * One JSON document on disk (`ctx.state`): loaded once, written atomically after changes.
 * Concurrent saves are coalesced: each caller's promise settles after a write that contains
 * its change, and at most one write waits behind the one in flight.
 */
export class JsonDocument<T> implements StateDocument<T> {
  readonly path: string;
  data: T;
  readonly #format: (data: T) => string | Uint8Array | readonly Uint8Array[];
  #writing: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  /** Committed changes not known to be on disk yet, oldest first. */
  readonly #changes: Change[] = [];

  private constructor(path: string, data: T, format: (data: T) => string | Uint8Array | readonly Uint8Array[]) {
    this.path = path;
    this.data = data;
    this.#format = format;
  }

  /** Reads the file; a missing or empty one is `init()` and written at once. Bad content stops the boot. */
  static async open<T>(path: string, opts: StateDocumentOptions<T>): Promise<JsonDocument<T>> {
    const format = opts.format ?? pretty;
    // nothing writes this document yet: temp files of a killed writer are leftovers
    await removeStaleTemps(dirname(path), basename(path));
    let text: string | undefined;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new BootError(`cannot read ${path}: ${(err as Error).message}`);
    }
    if (text === undefined || text.trim() === '') {
      const doc = new JsonDocument(path, opts.init(), format);
      await doc.save();
      return doc;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new BootError(`${path} is not valid JSON (${(err as Error).message}); it was left as it is: repair or move it away`);
    }
    return new JsonDocument(path, opts.parse ? opts.parse(raw, path) : raw as T, format);
  }

  async commit(apply: () => (() => void) | void): Promise<void> {
    const change: Change = { undo: apply() ?? undefined, failed: undefined };
    this.#changes.push(change);
    await this.save().catch(() => {});
    // failed by the write that held it, or by an earlier failed write it was built on
    if (change.failed) throw change.failed;
  }

  save(): Promise<void> {
    if (!this.#writing) {
      this.#writing = this.#write().finally(() => { this.#writing = undefined; });
      return this.#writing;
    }
    this.#queued ??= this.#writing.catch(() => {}).then(() => {
      this.#queued = undefined;
      return this.save();
    });
    return this.#queued;
  }

  /**
   * One write of the current data. On success the changes it holds are final; on failure every
   * change not on disk yet is undone, newest first (a later one may build on an earlier one), so
   * memory is the last written state again and each of their commits fails.
   */
  async #write(): Promise<void> {
    const held = this.#changes.length;
    try {
      await writeFileAtomic(this.path, this.#format(this.data));
    } catch (err) {
      const undone = this.#changes.splice(0);
      for (let i = undone.length - 1; i >= 0; i--) {
        undone[i]!.failed = err as Error;
        try {
          undone[i]!.undo?.();
        } catch {
          // an undo that throws must not keep the older ones from running
        }
      }
      throw err;
    }
    this.#changes.splice(0, held);
  }

  /** Waits for every pending write (errors were reported to their callers). */
  async settled(): Promise<void> {
    await this.#queued?.catch(() => {});
    await this.#writing?.catch(() => {});
  }
}
