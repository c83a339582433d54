import { nameGlob, type NameGlob } from '../../sdk/index.ts';
import type { ProcessListQuery } from './schema.ts';

// the process list's globs are the sdk's name globs (the events filters use them too)
export { nameGlob };

/*
 * The list filters of reference 4.4.1: `filter` picks the parts, `id`/`reference` and the
 * `idpattern`/`refpattern` globs pick the processes.
 */

export interface Parts {
  config: boolean;
  state: boolean;
  report: boolean;
  metadata: boolean;
}

const ALL: Parts = Object.freeze({ config: true, state: true, report: true, metadata: true });

/** Absent or empty = all four; unknown names are ignored. */
export function parseParts(filter: string | undefined): Parts {
  if (!filter) return ALL;
  const names = new Set(filter.split(',').map((s) => s.trim()));
  return { config: names.has('config'), state: names.has('state'), report: names.has('report'), metadata: names.has('metadata') };
}

export interface Listable {
  id: string;
  reference: string;
  /** Its IAM domain ('' = none); absent counts as none. */
  domain?: string;
}

/** The processes a list query selects (reference 4.4.1 steps 1-3, with the interface's precedence). */
export function selectProcesses<T extends Listable>(all: Iterable<T>, q: ProcessListQuery): T[] {
  let idRe: NameGlob | undefined;
  let refRe: NameGlob | undefined;
  if (q.idpattern) {
    idRe = nameGlob(q.idpattern);
    if (!idRe) return [];
  }
  if (q.refpattern) {
    refRe = nameGlob(q.refpattern);
    if (!refRe) return [];
  }
  // The interface lets `id` override `reference` (the original did the reverse, quirk 17.7).
  const ids = q.id ? new Set(q.id.split(',')) : undefined;
  const out: T[] = [];
  for (const p of all) {
    if (idRe && !idRe.test(p.id)) continue;
    if (refRe && !refRe.test(p.reference)) continue;
    if (ids ? !ids.has(p.id) : q.reference && p.reference !== q.reference) continue;
    if (q.domain !== undefined && (p.domain ?? '') !== (q.domain === '$none' ? '' : q.domain)) continue;
    out.push(p);
  }
  return out;
}
