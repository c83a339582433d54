/**
 * The persistent-state service plugins get as `ctx.state`: named JSON documents kept on disk,
 * written atomically (temp file, fsync, rename) and coalesced (many saves while a write is in
 * flight make one more write). The process engine keeps `db.json` this way.
 */

/** How a document is read and written. */
export interface StateDocumentOptions<T> {
  /** The value when the file is missing or empty. */
  init(): T;
  /**
   * Checks (and migrates) what was read; throw to stop the boot with your message. The file is
   * left as it is then. Default: the parsed JSON as is.
   */
  parse?(raw: unknown, path: string): T;
  /** The file's text; default JSON with a 4-space indent and a final newline. */
  format?(data: T): string | Uint8Array | readonly Uint8Array[];
}

/** One document: mutate `data`, then `save()`; the answer to a request waits for the save. */
export interface StateDocument<T> {
  /** Where the document lives on disk. */
  readonly path: string;
  /** The live value. */
  data: T;
  /** Resolves once a write containing every change made so far is on disk. */
  save(): Promise<void>;
  /**
   * Applies a change and saves it; when the write fails the change is undone (by the function
   * `apply` returns) and the error thrown, so memory and disk never disagree. A failed write
   * undoes every change not on disk yet, newest first (later ones may build on earlier ones):
   * do the checks that may refuse a change before `apply`, and change nothing else outside it.
   *
   * @example
   * await doc.commit(() => {
   *   const before = doc.data.hits;
   *   doc.data.hits++;
   *   return () => { doc.data.hits = before; };
   * });
   */
  commit(apply: () => (() => void) | void): Promise<void>;
}

/**
 * `ctx.state`: a plugin's documents live in `<db.dir>/plugins/<name>/<doc>.json`, except the
 * ones the definition lists in `rootState` (`<db.dir>/<doc>.json`, e.g. the process engine's
 * `db`, the reference layout). Opening a name twice gives the same document; pending writes
 * are flushed when the app closes.
 *
 * @example
 * const doc = await ctx.state.open('counters', { init: () => ({ hits: 0 }) });
 * doc.data.hits++;
 * await doc.save();
 */
export interface PluginState {
  open<T>(name: string, opts: StateDocumentOptions<T>): Promise<StateDocument<T>>;
  /**
   * Deletes a document's file once its pending writes are done (a document per thing a client
   * made, such as a recording's index, would otherwise stay after the thing is gone); a later
   * `open` of the name starts from `init`. Nothing happens when there is no such file.
   */
  remove(name: string): Promise<void>;
}
