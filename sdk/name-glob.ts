/*
 * Name globs, as the process list's `idpattern` / `refpattern` and the event filters use them:
 * one name, no path separators (`*` also matches `/` and `.`).
 *
 * A glob is compiled into a small program of a Thompson automaton and run over the name once,
 * keeping the set of states it may be in: time grows with the name's length times the glob's,
 * never exponentially. (A backtracking RegExp of `***********x` took 31 s on 200 process ids and
 * held the main thread; 3,000 stars stopped the service.)
 */
import { Automaton, classTest, type AutomatonOp } from './automaton.ts';

/** A compiled name glob. */
export interface NameGlob {
  /** Whether the whole of `name` matches. */
  test(name: string): boolean;
}

/**
 * Globs longer than this are refused as malformed (a name glob is a few dozen characters).
 *
 * @example
 * nameGlob('*'.repeat(MAX_GLOB_LENGTH + 1)); // undefined
 */
export const MAX_GLOB_LENGTH = 1024;

type Op = AutomatonOp;

const anyChar = () => true;

class Malformed extends Error {}

/** Compiles `glob` from `at` up to the end or the `}` / `,` closing the group it is in; returns where it stopped. */
function compileSeq(glob: string, at: number, inGroup: boolean, prog: Op[]): number {
  let i = at;
  while (i < glob.length) {
    const c = glob[i]!;
    if (inGroup && (c === '}' || c === ',')) return i;
    if (c === '\\') {
      const n = glob.charCodeAt(i + 1);
      if (Number.isNaN(n)) throw new Malformed();
      prog.push({ k: 'char', test: (x) => x === n });
      i += 2;
    } else if (c === '*') {
      // L: split(L+1, L+3); L+1: any; L+2: jmp L
      const l = prog.length;
      prog.push({ k: 'split', a: l + 1, b: l + 3 }, { k: 'char', test: anyChar }, { k: 'jmp', to: l });
      i++;
    } else if (c === '?') {
      prog.push({ k: 'char', test: anyChar });
      i++;
    } else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) throw new Malformed();
      prog.push({ k: 'char', test: classTest(glob.slice(i + 1, end), false) });
      i = end + 1;
    } else if (c === '{') i = compileGroup(glob, i + 1, prog);
    else {
      const code = glob.charCodeAt(i);
      prog.push({ k: 'char', test: (x) => x === code });
      i++;
    }
  }
  if (inGroup) throw new Malformed();
  return i;
}

/** Compiles the alternatives of a `{a,b,...}` group starting after its `{`; returns the index after its `}`. */
function compileGroup(glob: string, at: number, prog: Op[]): number {
  const jumps: Op[] = [];
  let i = at;
  for (;;) {
    const split: Op = { k: 'split', a: prog.length + 1, b: -1 };
    prog.push(split);
    i = compileSeq(glob, i, true, prog);
    const jmp: Op = { k: 'jmp', to: -1 };
    prog.push(jmp);
    jumps.push(jmp);
    if (glob[i] === '}') {
      // the last alternative needs no fork: both ways lead into it
      (split as { b: number }).b = (split as { a: number }).a;
      break;
    }
    (split as { b: number }).b = prog.length;
    i++; // the ','
  }
  for (const j of jumps) (j as { to: number }).to = prog.length;
  return i + 1;
}

/**
 * A glob without path separators (`*` matches anything, `?` one character, `[...]` a class,
 * `[!...]` its complement, `{a,b}` alternatives, `\` quotes the next character), compiled for
 * whole-name tests; undefined when the glob is malformed or longer than `MAX_GLOB_LENGTH` (the list
 * is then empty, as in the original). Matching takes time in proportion to the name's length
 * times the glob's, whatever the glob.
 *
 * @example
 * nameGlob('cam-{a,b}*')!.test('cam-b/1'); // true: `*` crosses `/`
 */
export function nameGlob(glob: string): NameGlob | undefined {
  if (glob.length > MAX_GLOB_LENGTH) return undefined;
  const prog: Op[] = [];
  try {
    compileSeq(glob, 0, false, prog);
  } catch (err) {
    if (err instanceof Malformed || err instanceof RangeError) return undefined;
    throw err;
  }
  prog.push({ k: 'match' });
  const automaton = new Automaton(prog);
  return { test: (name) => automaton.run(name, false) };
}

/**
 * The same as `nameGlob` (its former name: it made a RegExp, whose backtracking a glob of many
 * stars could make take minutes). Kept for plugins that call it; its result has `test` only.
 *
 * @example
 * globToRegExp('cam-*')!.test('cam-1'); // true
 */
export const globToRegExp = nameGlob;
