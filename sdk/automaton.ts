/*
 * The Thompson automaton that name globs (`name-glob.ts`) and label patterns (`linear-regex.ts`)
 * compile into: a program of character tests, forks, jumps and position assertions, run over the
 * text once while keeping the set of states it may be in. Time grows with the text's length times
 * the program's, whatever the pattern (a backtracking RegExp can take minutes on a few characters).
 */

/**
 * One step of a program: a test of one UTF-16 code unit, a fork, a jump, an assertion about the
 * position (`^`, `$`, `\b`), or the end.
 */
export type AutomatonOp =
  | { k: 'char'; test: (c: number) => boolean }
  | { k: 'split'; a: number; b: number }
  | { k: 'jmp'; to: number }
  | { k: 'assert'; at: (text: string, i: number) => boolean }
  | { k: 'match' };

/**
 * The character test of a glob class body (between `[` and `]`): characters and `a-z` ranges,
 * `!` or `^` first for the complement; with `escapes`, `\\x` is the character x; `never` (e.g. `/`)
 * is outside every class. Throws a RangeError for a range written backwards.
 *
 * @example
 * classTest('!a-c', false)(0x64); // true: d is not in a-c
 */
export function classTest(body: string, escapes: boolean, never = -1): (c: number) => boolean {
  const neg = body.startsWith('!') || body.startsWith('^');
  const items = neg ? body.slice(1) : body;
  const ranges: number[] = [];
  for (let i = 0; i < items.length; i++) {
    if (escapes && items[i] === '\\' && i + 1 < items.length) i++;
    const lo = items.charCodeAt(i);
    if (items[i + 1] === '-' && i + 2 < items.length) {
      const hi = items.charCodeAt(i + 2);
      if (hi < lo) throw new RangeError(`the class range ${items.slice(i, i + 3)} is backwards`);
      ranges.push(lo, hi);
      i += 2;
    } else ranges.push(lo, lo);
  }
  return (c) => {
    if (c === never) return false;
    let inside = false;
    for (let i = 0; i < ranges.length && !inside; i += 2) inside = c >= ranges[i]! && c <= ranges[i + 1]!;
    return inside !== neg;
  };
}

const CHAR = 0;
const SPLIT = 1;
const JMP = 2;
const ASSERT = 3;
const MATCH = 4;

/**
 * A program made ready to run: its steps in typed arrays, with the scratch sets reused by every
 * run (a run never calls out before it ends, so one set per program is enough).
 *
 * @example
 * const a = new Automaton([{ k: 'char', test: (c) => c === 97 }, { k: 'match' }]);
 * a.run('xa', true); // true
 */
export class Automaton {
  readonly #kind: Uint8Array;
  readonly #a: Int32Array;
  readonly #b: Int32Array;
  readonly #tests: (((c: number) => boolean) | undefined)[];
  readonly #asserts: (((text: string, i: number) => boolean) | undefined)[];
  readonly #mark: Uint32Array;
  #current: Int32Array;
  #next: Int32Array;
  readonly #stack: Int32Array;
  #gen = 0;
  /** States visited by every run so far: callers bound the work of many runs with it. */
  steps = 0;

  constructor(prog: readonly AutomatonOp[]) {
    const n = prog.length;
    this.#kind = new Uint8Array(n);
    this.#a = new Int32Array(n);
    this.#b = new Int32Array(n);
    this.#tests = new Array(n);
    this.#asserts = new Array(n);
    prog.forEach((op, p) => {
      if (op.k === 'char') [this.#kind[p], this.#tests[p]] = [CHAR, op.test];
      else if (op.k === 'split') [this.#kind[p], this.#a[p], this.#b[p]] = [SPLIT, op.a, op.b];
      else if (op.k === 'jmp') [this.#kind[p], this.#a[p]] = [JMP, op.to];
      else if (op.k === 'assert') [this.#kind[p], this.#asserts[p]] = [ASSERT, op.at];
      else this.#kind[p] = MATCH;
    });
    this.#mark = new Uint32Array(n);
    this.#current = new Int32Array(n);
    this.#next = new Int32Array(n);
    this.#stack = new Int32Array(2 * n + 1);
  }

  /** Adds `pc` and the states it reaches without a character to `list` (at `len`); returns the new length, negated when a match was reached. */
  #add(list: Int32Array, len: number, pc: number, text: string, i: number): number {
    const stack = this.#stack;
    const mark = this.#mark;
    const gen = this.#gen;
    let top = 0;
    let found = false;
    stack[top++] = pc;
    while (top > 0) {
      const p = stack[--top]!;
      if (mark[p] === gen) continue;
      mark[p] = gen;
      this.steps++;
      const k = this.#kind[p]!;
      if (k === SPLIT) {
        stack[top++] = this.#b[p]!;
        stack[top++] = this.#a[p]!;
      } else if (k === JMP) stack[top++] = this.#a[p]!;
      else if (k === ASSERT) {
        if (this.#asserts[p]!(text, i)) stack[top++] = p + 1;
      } else {
        if (k === MATCH) found = true;
        list[len++] = p;
      }
    }
    return found ? -len - 1 : len;
  }

  /**
   * Runs the program (entry at 0) over `text`. `search`: a match may start and end anywhere (a
   * RegExp's `test`); otherwise it must take the whole text (a glob).
   *
   * @example
   * new Automaton([{ k: 'char', test: (c) => c === 97 }, { k: 'match' }]).run('a', false); // true
   */
  run(text: string, search: boolean): boolean {
    if (this.#gen + text.length + 2 > 0xffffffff) {
      this.#mark.fill(0);
      this.#gen = 0;
    }
    this.#gen++;
    let n = this.#add(this.#current, 0, 0, text, 0);
    let found = n < 0;
    if (found) n = -n - 1;
    for (let i = 0; i < text.length; i++) {
      if (search ? found : n === 0) break;
      const c = text.charCodeAt(i);
      this.#gen++;
      const cur = this.#current;
      const next = this.#next;
      let m = 0;
      found = false;
      for (let j = 0; j < n; j++) {
        const p = cur[j]!;
        if (this.#kind[p] !== CHAR || !this.#tests[p]!(c)) continue;
        m = this.#add(next, m, p + 1, text, i + 1);
        if (m < 0) [found, m] = [true, -m - 1];
      }
      if (search) {
        m = this.#add(next, m, 0, text, i + 1);
        if (m < 0) [found, m] = [true, -m - 1];
      }
      this.#current = next;
      this.#next = cur;
      n = m;
    }
    return found;
  }
}
