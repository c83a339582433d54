import type { ApiProcess } from '../../sdk/index.ts';
import type { Parts } from './list-filter.ts';
import { processJson } from './json-write.ts';
import { ownedBytes } from './owned-bytes.ts';
import type { ProcessEntry } from './process-entry.ts';

/** One process's JSON as sent last time, and the parts it was built from. */
interface Built {
  config: boolean;
  state: string | undefined;
  report: string | undefined;
  metadata: string | undefined;
  bytes: Buffer;
}

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/**
 * The API's Process (reference 5.3) as UTF-8 JSON. Every part is a cached string that is
 * replaced when it changes (config: never for an entry, a PUT makes a new one; state: see
 * ProcessEntry.stateJson; report: by log version; metadata: per stored object), so comparing
 * them by identity tells whether a process's bytes from the last request still hold. A list
 * of 1,000 mostly stopped processes then copies ready Buffers into one: no big string to join,
 * no UTF-8 encoding of the whole body for its length and again for the socket.
 */
export class ProcessViews {
  readonly #metadata: (id: string) => Record<string, unknown> | null;
  readonly #metaJson = new WeakMap<object, string>();
  /** By entry, then by the combination of parts (a bit each), so clients asking for different parts do not evict each other. */
  readonly #built = new WeakMap<ProcessEntry, Built[]>();
  /** The objects parsed from bytes built here, while those bytes hold. */
  readonly #parsed = new WeakMap<Buffer, ApiProcess>();

  constructor(metadata: (id: string) => Record<string, unknown> | null) {
    this.#metadata = metadata;
  }

  metadataJson(id: string): string {
    const md = this.#metadata(id);
    if (!md) return 'null';
    let json = this.#metaJson.get(md);
    if (json === undefined) {
      json = JSON.stringify(md);
      this.#metaJson.set(md, json);
    }
    return json;
  }

  process(e: ProcessEntry, parts: Parts): Buffer {
    const config = parts.config;
    const state = parts.state ? e.stateJson() : undefined;
    const report = parts.report ? e.monitor.reportJson() : undefined;
    const metadata = parts.metadata ? this.metadataJson(e.id) : undefined;
    let slots = this.#built.get(e);
    if (!slots) {
      slots = [];
      this.#built.set(e, slots);
    }
    const slot = (config ? 1 : 0) | (parts.state ? 2 : 0) | (parts.report ? 4 : 0) | (parts.metadata ? 8 : 0);
    const last = slots[slot];
    if (last && last.config === config && last.state === state && last.report === report && last.metadata === metadata) {
      return last.bytes;
    }
    const c = e.config;
    const bytes = ownedBytes(processJson({
      id: c.id, type: c.type, reference: c.reference, createdAt: e.createdAt, updatedAt: e.updatedAt,
      config: config ? e.configJson : undefined, state, report, metadata,
    }));
    slots[slot] = { config, state, report, metadata, bytes };
    return bytes;
  }

  /**
   * The process as an object, parsed from the very bytes the route sends (so both always agree);
   * parsed again only when those bytes changed. Shared between callers: never change it.
   */
  object(e: ProcessEntry, parts: Parts): ApiProcess {
    const bytes = this.process(e, parts);
    let o = this.#parsed.get(bytes);
    if (!o) {
      o = JSON.parse(bytes.toString('utf8')) as ApiProcess;
      this.#parsed.set(bytes, o);
    }
    return o;
  }

  list(entries: readonly ProcessEntry[], parts: Parts): Buffer {
    const chunks: Buffer[] = [OPEN];
    entries.forEach((e, i) => {
      if (i) chunks.push(COMMA);
      chunks.push(this.process(e, parts));
    });
    chunks.push(CLOSE);
    return Buffer.concat(chunks);
  }
}
