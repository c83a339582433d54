import { nameGlob, type CoreEvent, type EventFilter, type NameGlob } from '../../sdk/index.ts';
import { eventsErrors } from './errors.ts';

/** Globs a filter's `types` or `subjects` may hold (each event is tested against all of them, per stream). */
export const MAX_FILTER_GLOBS = 32;
/** Characters a filter's glob may have. */
export const MAX_FILTER_GLOB_LENGTH = 256;

/**
 * A client's stream filter stays small (400 otherwise): every event is tested against every glob
 * of every open stream. Webhooks' filters are the operator's (the config file) and are not held to it.
 */
export function checkFilterBounds(f: EventFilter): void {
  for (const [what, list] of [['types', f.types ?? []], ['subjects', f.subjects ?? []]] as const) {
    if (list.length > MAX_FILTER_GLOBS) throw eventsErrors.badFilter(`${what}: at most ${MAX_FILTER_GLOBS} globs`);
    if (list.some((g) => g.length > MAX_FILTER_GLOB_LENGTH)) throw eventsErrors.badFilter(`${what}: a glob of at most ${MAX_FILTER_GLOB_LENGTH} characters`);
  }
}

/** A compiled filter: true when the subscriber wants the event. */
export type EventMatcher = (e: CoreEvent) => boolean;

const KEYED = /^([A-Za-z_][A-Za-z0-9_]*):(.*)$/s;

interface SubjectGlob { key: string | undefined; re: NameGlob }

function compile(glob: string, what: string): NameGlob {
  const re = nameGlob(glob);
  if (!re) throw eventsErrors.badFilter(`${what}: malformed glob '${glob}'`);
  return re;
}

/**
 * Compiles type and subject globs (OR within a list, AND between the two lists; an empty list
 * matches all). A subject glob `key:glob` tests that key's value, a bare glob any value.
 * Throws the API's 400 on a malformed glob.
 */
export function compileFilter(f: EventFilter): EventMatcher {
  const types = (f.types ?? []).filter((s) => s !== '').map((g) => compile(g, 'types'));
  const subjects: SubjectGlob[] = (f.subjects ?? []).filter((s) => s !== '').map((g) => {
    const m = KEYED.exec(g);
    return m ? { key: m[1], re: compile(m[2]!, 'subjects') } : { key: undefined, re: compile(g, 'subjects') };
  });
  if (!types.length && !subjects.length) return () => true;
  return (e) => {
    if (types.length && !types.some((re) => re.test(e.type))) return false;
    if (!subjects.length) return true;
    for (const s of subjects) {
      if (s.key !== undefined) {
        const v = e.subject[s.key];
        if (v !== undefined && s.re.test(v)) return true;
      } else {
        for (const v of Object.values(e.subject)) if (s.re.test(v)) return true;
      }
    }
    return false;
  };
}

/** A query value `a,b` (or repeated) as a list of globs; commas inside `{..}` stay. */
export function splitGlobs(value: string | string[] | undefined): string[] {
  const all = Array.isArray(value) ? value : value === undefined ? [] : [value];
  const out: string[] = [];
  for (const v of all) {
    let depth = 0;
    let cur = '';
    for (const c of v) {
      if (c === '{') depth++;
      else if (c === '}' && depth > 0) depth--;
      if (c === ',' && depth === 0) {
        out.push(cur.trim());
        cur = '';
      } else cur += c;
    }
    out.push(cur.trim());
  }
  return out.filter((s) => s !== '');
}
