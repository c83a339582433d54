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

/** The kept queries by hash, oldest dropped first beyond `max`. */
export class PersistedQueries {
  readonly #byHash = new Map<string, string>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
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
    if (!this.#byHash.has(hash)) {
      this.#byHash.set(hash, query);
      if (this.#byHash.size > this.#max) this.#byHash.delete(this.#byHash.keys().next().value!);
    }
    return { query };
  }
}
