import { createHash } from 'node:crypto';

/*
 * Automatic persisted queries (reference 4.15; the Apollo protocol gqlgen speaks): a client sends
 * `extensions.persistedQuery {version: 1, sha256Hash}` without the query; an unknown hash answers
 * `PersistedQueryNotFound`, and the client sends the query with its hash once, which is kept.
 */

export interface PersistedQueryExt {
  version?: unknown;
  sha256Hash?: unknown;
}

/** What the route does with a request: run this query, or answer with this error. */
export type Resolved = { query: string } | { error: { message: string; extensions: { code: string } } };

const notFound: Resolved = { error: { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } } };
const mismatch: Resolved = { error: { message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST' } } };
const badVersion: Resolved = { error: { message: 'unsupported persisted query version', extensions: { code: 'BAD_REQUEST' } } };
const noQuery: Resolved = { error: { message: 'no query', extensions: { code: 'BAD_REQUEST' } } };

/** Characters of query text kept at most, over every kept query (a query may be as long as a body: 256 KB). */
export const PERSISTED_MAX_CHARS = 4 * 1024 * 1024;

/** The kept queries by hash, oldest dropped first beyond `max` queries or `maxChars` of text. */
export class PersistedQueries {
  readonly #byHash = new Map<string, string>();
  readonly #max: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(max: number, maxChars = PERSISTED_MAX_CHARS) {
    this.#max = max;
    this.#maxChars = maxChars;
  }

  /** Characters of query text kept now. */
  get chars(): number {
    return this.#chars;
  }

  /** The query to run for a request body's `query` and `extensions.persistedQuery`. */
  resolve(query: string | undefined, ext: PersistedQueryExt | undefined): Resolved {
    if (!ext) return query === undefined ? noQuery : { query };
    if (ext.version !== 1) return badVersion;
    const hash = typeof ext.sha256Hash === 'string' ? ext.sha256Hash.toLowerCase() : '';
    if (query === undefined) {
      const kept = this.#byHash.get(hash);
      return kept === undefined ? notFound : { query: kept };
    }
    if (createHash('sha256').update(query).digest('hex') !== hash) return mismatch;
    if (!this.#byHash.has(hash) && query.length <= this.#maxChars) {
      this.#byHash.set(hash, query);
      this.#chars += query.length;
      for (const [h, q] of this.#byHash) {
        if (this.#byHash.size <= this.#max && this.#chars <= this.#maxChars) break;
        this.#byHash.delete(h);
        this.#chars -= q.length;
      }
    }
    return { query };
  }
}
