import { Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext } from 'graphql';
import { graphqlErrors } from './errors.ts';

/*
 * Refuses hostile queries before they run, as a validation rule (so the refusal is a 400 with
 * the reason, and mercurius caches good documents with their verdict):
 * - depth: how deeply fields nest; an introspection root (`__schema`, `__type`) counts as one level,
 *   since clients' standard introspection query nests deeper than any data does;
 * - within introspection, how many list fields (`types`, `fields`, ...) a path passes through:
 *   `fields { type { fields { ... } } }` repeated multiplies the answer by the schema's size;
 * - cost: every selected field counts, aliases and each use of a fragment included, so neither
 *   `a1: processes {...} a2: processes {...}` nor fragments spread many times slip through;
 * - root fields that answer all of something (`log`, `processes`, `metrics`, `probe`): a few.
 */

export interface QueryLimits {
  /** Deepest allowed nesting of fields (`processes { state { progress } }` is 3). */
  depth: number;
  /** Most selected fields, after expanding fragments. */
  fields: number;
  /** Most introspection list fields along one path (the standard introspection query needs 3). */
  introspectionLists: number;
  /** Most root fields whose one answer is large (the whole log, every process, metrics, a probe). */
  heavyRoots: number;
}

/** Defaults: the data's deepest path is 7 (`processes/state/progress/input/avstream/input/state`). */
export const DEFAULT_LIMITS: QueryLimits = Object.freeze({ depth: 10, fields: 1000, introspectionLists: 3, heavyRoots: 8 });

/**
 * Root fields whose answer is all of something: one alias of `log` counts one field and answers
 * the whole log (999 aliases of it answered 224 MB in 9 s, the service held meanwhile).
 */
const HEAVY_ROOTS = new Set(['log', 'processes', 'metrics', 'probe']);

/** How many heavy root fields an operation selects, each alias and each spread of a fragment counted. */
export function heavyRoots(set: SelectionSetNode | undefined, fragment: (name: string) => SelectionSetNode | undefined, seen = new Set<string>()): number {
  let n = 0;
  for (const sel of set?.selections ?? []) {
    if (sel.kind === Kind.FIELD) n += HEAVY_ROOTS.has(sel.name.value) ? 1 : 0;
    else if (sel.kind === Kind.INLINE_FRAGMENT) n += heavyRoots(sel.selectionSet, fragment, seen);
    else if (!seen.has(sel.name.value)) {
      // a cycle (refused by another rule) ends here
      seen.add(sel.name.value);
      n += heavyRoots(fragment(sel.name.value), fragment, seen);
      seen.delete(sel.name.value);
    }
  }
  return n;
}

const INTROSPECTION_ROOTS = new Set(['__schema', '__type']);
const INTROSPECTION_LISTS = new Set(['types', 'fields', 'args', 'inputFields', 'interfaces', 'possibleTypes', 'enumValues', 'directives']);

interface Measure {
  depth: number;
  lists: number;
  fields: number;
}

const NONE: Measure = Object.freeze({ depth: 0, lists: 0, fields: 0 });

/** The measures of one operation; fragments are measured once each (a spread of a cycle counts as nothing). */
export function measure(set: SelectionSetNode | undefined, fragment: (name: string) => SelectionSetNode | undefined): Measure {
  const memo = new Map<string, Measure>();
  const walk = (s: SelectionSetNode | undefined): Measure => {
    if (!s) return NONE;
    let depth = 0;
    let lists = 0;
    let fields = 0;
    for (const sel of s.selections) {
      let m: Measure;
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value;
        const c = walk(sel.selectionSet);
        if (INTROSPECTION_ROOTS.has(name)) m = { depth: 1, lists: c.lists, fields: 1 + c.fields };
        else m = { depth: 1 + c.depth, lists: c.lists + (INTROSPECTION_LISTS.has(name) ? 1 : 0), fields: 1 + c.fields };
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        m = walk(sel.selectionSet);
      } else {
        const name = sel.name.value;
        let f = memo.get(name);
        if (!f) {
          memo.set(name, NONE); // a cycle (refused by another rule) ends here
          f = walk(fragment(name));
          memo.set(name, f);
        }
        m = f;
      }
      depth = Math.max(depth, m.depth);
      lists = Math.max(lists, m.lists);
      fields += m.fields;
    }
    return { depth, lists, fields };
  };
  return walk(set);
}

/** The validation rule for mercurius' `validationRules`. */
export function limitsRule(l: QueryLimits) {
  return (ctx: ValidationContext): ASTVisitor => ({
    OperationDefinition(op) {
      const m = measure(op.selectionSet, (name) => ctx.getFragment(name)?.selectionSet);
      if (m.depth > l.depth) ctx.reportError(graphqlErrors.tooDeep(m.depth, l.depth));
      if (m.lists > l.introspectionLists) ctx.reportError(graphqlErrors.tooDeepIntrospection(m.lists, l.introspectionLists));
      if (m.fields > l.fields) ctx.reportError(graphqlErrors.tooComplex(m.fields, l.fields));
      const heavy = heavyRoots(op.selectionSet, (name) => ctx.getFragment(name)?.selectionSet);
      if (heavy > l.heavyRoots) ctx.reportError(graphqlErrors.tooHeavy(heavy, l.heavyRoots));
      return false;
    },
  });
}
