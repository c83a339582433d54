import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../sdk/index.ts';
import type { DbData } from './db-document.ts';

/** Bytes a value takes in db.json at a depth (the fragment cache's text: cached per stored object). */
export type MeasureBytes = (value: unknown, depth: number) => number;

interface Measured { v: unknown; bytes: number }

/** The Error of a metadata change beyond `db.max_metadata_mbytes`. */
export const metadataTooLarge = (would: number, limit: number) => new ApiError(413, 'Payload Too Large',
  [`the metadata would take ${would} bytes in db.json; db.max_metadata_mbytes allows ${limit}`], 'METADATA_TOO_LARGE');

/**
 * `db.max_metadata_mbytes`: process and global metadata together, measured as db.json stores
 * them (each entry's key and its pretty-printed value), so metadata PUTs cannot grow db.json,
 * and the memory of every save, without bound. A change that grows the total beyond the limit is
 * refused (413) before anything is applied; one that shrinks it always passes (a lowered limit
 * never locks metadata in). Entries are measured once per stored object and summed per change,
 * so processes deleted or replicated from another node need no bookkeeping here.
 */
export class MetadataBudget {
  readonly #limit: number;
  readonly #data: () => DbData;
  readonly #measure: MeasureBytes;
  readonly #process = new Map<string, Measured>();
  readonly #system = new Map<string, Measured>();
  /** Content-Length of metadata bodies admitted and not yet answered. */
  #inFlight = 0;

  /** `limitBytes` 0 = no limit. */
  constructor(limitBytes: number, data: () => DbData, measure: MeasureBytes) {
    this.#limit = limitBytes;
    this.#data = data;
    this.#measure = measure;
  }

  /** Bytes of all metadata now. */
  total(): number {
    const md = this.#data().metadata;
    return this.#sum(this.#process, md.process) + this.#sum(this.#system, md.system);
  }

  /** Refuses (413) giving process `id` the metadata object `next` (null: none) when the total would pass the limit. */
  checkProcess(id: string, next: Record<string, unknown> | null): void {
    this.#check(this.#process, this.#data().metadata.process, id, next);
  }

  /** Refuses (413) setting global key `key` to `next` (null: deleted) when the total would pass the limit. */
  checkSystem(key: string, next: unknown): void {
    this.#check(this.#system, this.#data().metadata.system, key, next);
  }

  /**
   * A `preParsing` hook of the metadata PUT routes: a body whose Content-Length does not fit in
   * the room left (the limit, less the metadata stored and the bodies being received, plus what
   * the key holds now, which the body replaces) is refused (413) before it is read, so parallel
   * bodies cannot together cost more memory than the limit; the exact check follows the parse.
   */
  readonly admit = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const length = Number(request.headers['content-length']);
    if (this.#limit <= 0 || !Number.isSafeInteger(length) || length <= 0) return;
    const { id, key = '' } = request.params as { id?: string; key?: string };
    const data = this.#data().metadata;
    const held = id === undefined ? data.system : data.process[id] ?? {};
    const replaced = Object.prototype.hasOwnProperty.call(held, key) ? this.#bytes(key, held[key]) : 0;
    const would = this.total() + this.#inFlight + length - replaced;
    if (would > this.#limit) throw metadataTooLarge(would, this.#limit);
    this.#inFlight += length;
    reply.raw.once('close', () => { this.#inFlight -= length; });
  };

  #check(cache: Map<string, Measured>, dict: Record<string, unknown>, key: string, next: unknown): void {
    if (this.#limit <= 0 || next === null || next === undefined) return;
    const total = this.total();
    const before = Object.prototype.hasOwnProperty.call(dict, key) ? this.#entry(cache, key, dict[key]) : 0;
    const after = this.#bytes(key, next);
    const would = total - before + after;
    if (after > before && would > this.#limit) throw metadataTooLarge(would, this.#limit);
  }

  #sum(cache: Map<string, Measured>, dict: Record<string, unknown>): number {
    const keys = Object.keys(dict);
    let sum = 0;
    for (const k of keys) sum += this.#entry(cache, k, dict[k]);
    // entries gone from the document (a deleted process) are forgotten
    if (cache.size > keys.length) for (const k of cache.keys()) if (!Object.prototype.hasOwnProperty.call(dict, k)) cache.delete(k);
    return sum;
  }

  #entry(cache: Map<string, Measured>, key: string, v: unknown): number {
    let m = cache.get(key);
    if (m === undefined || m.v !== v) cache.set(key, m = { v, bytes: this.#bytes(key, v) });
    return m.bytes;
  }

  #bytes(key: string, v: unknown): number {
    if (v === null || v === undefined) return 0;
    // a string is counted without writing it out: a refused one then costs no copy
    // (a metadata entry sits at depth 2 of db.json; its value is written at depth 3)
    return Buffer.byteLength(key) + (typeof v === 'string' ? jsonStringBytes(v) : this.#measure(v, 3));
  }
}

/** UTF-8 bytes of `JSON.stringify(s)`, without building it. */
export function jsonStringBytes(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x0c || c === 0x0a || c === 0x0d || c === 0x09) n += 2;
    else if (c < 0x20) n += 6;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff) {
      n += 4;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) n += 6;
    else n += 3;
  }
  return n;
}
