import type { Parts } from './list-filter.ts';
import { pushProcess } from './json-write.ts';
import type { ProcessEntry } from './process-entry.ts';

/**
 * The API's Process (reference 5.3) as JSON: only the parts the filter asks for are built; the
 * config and report parts are the entry's cached JSON and metadata JSON is cached per stored
 * object (a change stores a new object), so listing many processes mostly joins ready strings.
 */
export class ProcessViews {
  readonly #metadata: (id: string) => Record<string, unknown> | null;
  readonly #metaJson = new WeakMap<object, string>();

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

  #push(out: string[], e: ProcessEntry, parts: Parts): void {
    const c = e.config;
    pushProcess(out, {
      id: c.id, type: c.type, reference: c.reference, createdAt: e.createdAt, updatedAt: e.updatedAt,
      config: parts.config ? e.configJson : undefined,
      report: parts.report ? e.monitor.reportJson() : undefined,
      metadata: parts.metadata ? this.metadataJson(c.id) : undefined,
    }, parts.state ? (o) => e.pushState(o) : undefined);
  }

  process(e: ProcessEntry, parts: Parts): string {
    const out: string[] = [];
    this.#push(out, e, parts);
    return out.join('');
  }

  /** One array of pieces for the whole list, joined once (no string is copied twice). */
  list(entries: readonly ProcessEntry[], parts: Parts): string {
    const out: string[] = ['['];
    entries.forEach((e, i) => {
      if (i) out.push(',');
      this.#push(out, e, parts);
    });
    out.push(']');
    return out.join('');
  }
}
