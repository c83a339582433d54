/*
 * Regular expressions a client sends (the metrics query's label patterns), matched in linear time
 * as the reference's RE2 does: compiled into a Thompson automaton (`automaton.ts`), never
 * backtracking. A backtracking RegExp of `^(.?){40}z$` held the main thread about 60 s.
 *
 * The syntax is RE2's, which is also a RegExp's without backreferences and lookaround:
 * `. [...] [^...] [[:alpha:]] \d \w \s \D \W \S \b \B ^ $ \A \z | (...) (?:...) (?P<n>...)
 * (?<n>...) (?i) (?i:...) (?s) (?m) * + ? {n} {n,} {n,m}` (lazy forms match the same), escapes
 * `\n \t \r \f \v \0 \xHH \x{H..} \uHHHH \Q...\E` and any quoted punctuation. Characters are
 * UTF-16 code units, as a RegExp without the `u` flag reads them.
 */
import { Automaton, type AutomatonOp } from './automaton.ts';

/** A compiled pattern. */
export interface LinearRegex {
  /** Whether the pattern matches anywhere in `text` (a RegExp's `test`). */
  test(text: string): boolean;
  /** States visited by every `test` so far: a caller bounds the work of many tests with it. */
  readonly steps: number;
  /** Steps of the compiled program (at most `MAX_REGEX_PROGRAM`): a test's work per character is at most this. */
  readonly size: number;
}

/**
 * The most program steps a pattern compiles to (a counted repeat copies its body): past it the
 * pattern is refused as if malformed. Repeat counts are at most 1,000, as in RE2.
 *
 * @example
 * linearRegex('(a{1000}){1000}'); // undefined: a million steps
 */
export const MAX_REGEX_PROGRAM = 10_000;

class Malformed extends Error {}

type Test = (c: number) => boolean;
type Node =
  | { t: 'char'; test: Test }
  | { t: 'assert'; at: (text: string, i: number) => boolean }
  | { t: 'cat'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'rep'; node: Node; min: number; max: number };

interface Flags { i: boolean; m: boolean; s: boolean }

const range = (lo: number, hi: number): Test => (c) => c >= lo && c <= hi;
const isWord = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isDigit = range(48, 57);
const SPACE = new Set([9, 10, 11, 12, 13, 32, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff]);
const isSpace = (c: number) => SPACE.has(c) || (c >= 0x2000 && c <= 0x200a);
const isLineEnd = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
const not = (f: Test): Test => (c) => !f(c);

const POSIX: Record<string, Test> = {
  alnum: (c) => isDigit(c) || range(65, 90)(c) || range(97, 122)(c), alpha: (c) => range(65, 90)(c) || range(97, 122)(c),
  ascii: range(0, 127), blank: (c) => c === 32 || c === 9, cntrl: (c) => c < 32 || c === 127, digit: isDigit,
  graph: range(33, 126), lower: range(97, 122), print: range(32, 126), upper: range(65, 90), word: isWord,
  punct: (c) => range(33, 47)(c) || range(58, 64)(c) || range(91, 96)(c) || range(123, 126)(c),
  space: (c) => (c >= 9 && c <= 13) || c === 32, xdigit: (c) => isDigit(c) || range(65, 70)(c) || range(97, 102)(c),
};

const CLASS_ESCAPES: Record<string, Test> = { d: isDigit, D: not(isDigit), w: isWord, W: not(isWord), s: isSpace, S: not(isSpace) };
const CHAR_ESCAPES: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7, 0: 0 };

const lower = (c: number) => (c < 128 ? (c >= 65 && c <= 90 ? c + 32 : c) : String.fromCharCode(c).toLowerCase().charCodeAt(0));
const upper = (c: number) => (c < 128 ? (c >= 97 && c <= 122 ? c - 32 : c) : String.fromCharCode(c).toUpperCase().charCodeAt(0));
/** A test that also takes the other case of a character when `(?i)` is on. */
const folded = (f: Test, flags: Flags): Test => (flags.i ? (c) => f(c) || f(lower(c)) || f(upper(c)) : f);

const wordAt = (text: string, i: number) => i >= 0 && i < text.length && isWord(text.charCodeAt(i));
const boundary = (text: string, i: number) => wordAt(text, i - 1) !== wordAt(text, i);

/** A recursive-descent parser of one pattern into a tree; throws Malformed on anything RE2 refuses. */
class Parser {
  i = 0;
  readonly src: string;
  constructor(src: string) {
    this.src = src;
  }

  parse(): Node {
    const n = this.alt({ i: false, m: false, s: false });
    if (this.i < this.src.length) throw new Malformed(); // a ')' without its '('
    return n;
  }

  alt(flags: Flags): Node {
    const items = [this.cat(flags)];
    while (this.src[this.i] === '|') {
      this.i++;
      items.push(this.cat(flags));
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  /** A sequence up to `|`, `)` or the end; `(?i)` changes `flags` for the rest of the group. */
  cat(flags: Flags): Node {
    const items: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      if (this.src.startsWith('(?', this.i) && this.setFlags(flags)) continue;
      if (this.src.startsWith('\\Q', this.i)) {
        this.quoted(items, flags);
        continue;
      }
      const atom = this.atom(flags);
      items.push(this.quantified(atom));
    }
    return { t: 'cat', items };
  }

  /** `(?flags)` alone: applies to the rest of the group. False when it is a group `(?...:` instead. */
  setFlags(flags: Flags): boolean {
    const m = /^\(\?([ims]*)(?:-([ims]*))?([):])/.exec(this.src.slice(this.i, this.i + 12));
    if (!m || m[3] !== ')') return false;
    for (const f of m[1]!) flags[f as keyof Flags] = true;
    for (const f of m[2] ?? '') flags[f as keyof Flags] = false;
    this.i += m[0].length;
    return true;
  }

  quoted(items: Node[], flags: Flags): void {
    const end = this.src.indexOf('\\E', this.i + 2);
    const text = this.src.slice(this.i + 2, end < 0 ? undefined : end);
    for (let k = 0; k < text.length; k++) items.push(this.literal(text.charCodeAt(k), flags));
    this.i = end < 0 ? this.src.length : end + 2;
  }

  literal(code: number, flags: Flags): Node {
    return { t: 'char', test: folded((c) => c === code, flags) };
  }

  atom(flags: Flags): Node {
    const c = this.src[this.i++]!;
    switch (c) {
      case '(': return this.group(flags);
      case '[': return { t: 'char', test: this.charClass(flags) };
      case '.': return { t: 'char', test: flags.s ? () => true : (x) => !isLineEnd(x) };
      case '^': return { t: 'assert', at: flags.m ? (s, i) => i === 0 || isLineEnd(s.charCodeAt(i - 1)) : (_s, i) => i === 0 };
      case '$': return { t: 'assert', at: flags.m ? (s, i) => i === s.length || isLineEnd(s.charCodeAt(i)) : (s, i) => i === s.length };
      case '\\': return this.escape(flags);
      case '*': case '+': case '?': throw new Malformed(); // nothing to repeat
      default: return this.literal(c.charCodeAt(0), flags);
    }
  }

  group(outer: Flags): Node {
    const flags = { ...outer };
    if (this.src[this.i] === '?') {
      const m = /^\?(?::|P?<[A-Za-z_][A-Za-z0-9_]*>|([ims]*)(?:-([ims]*))?:)/.exec(this.src.slice(this.i, this.i + 200));
      if (!m) throw new Malformed(); // lookaround and the like: RE2 has none
      for (const f of m[1] ?? '') flags[f as keyof Flags] = true;
      for (const f of m[2] ?? '') flags[f as keyof Flags] = false;
      this.i += m[0].length;
    }
    const inner = this.alt(flags);
    if (this.src[this.i] !== ')') throw new Malformed();
    this.i++;
    return inner;
  }

  /** After an atom: `* + ? {n} {n,} {n,m}`, each with an optional lazy `?`; `{` that is no repeat is a literal. */
  quantified(atom: Node): Node {
    const q = this.src[this.i];
    let min: number;
    let max: number;
    if (q === '*' || q === '+' || q === '?') {
      this.i++;
      [min, max] = q === '*' ? [0, Infinity] : q === '+' ? [1, Infinity] : [0, 1];
    } else if (q === '{') {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i, this.i + 24));
      if (!m) return atom;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      if (min > 1000 || (max !== Infinity && (max > 1000 || max < min))) throw new Malformed();
      this.i += m[0].length;
    } else return atom;
    if (atom.t === 'assert') throw new Malformed();
    if (this.src[this.i] === '?') this.i++;
    const after = this.src[this.i];
    if (after === '*' || after === '+' || after === '?' || (after === '{' && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.i, this.i + 24)))) throw new Malformed();
    return { t: 'rep', node: atom, min, max };
  }

  escape(flags: Flags): Node {
    const e = this.src[this.i];
    if (e === 'b' || e === 'B') {
      this.i++;
      return { t: 'assert', at: e === 'b' ? boundary : (s, i) => !boundary(s, i) };
    }
    if (e === 'A' || e === 'z') {
      this.i++;
      return { t: 'assert', at: e === 'A' ? (_s, i) => i === 0 : (s, i) => i === s.length };
    }
    const cls = e === undefined ? undefined : CLASS_ESCAPES[e];
    if (cls) {
      this.i++;
      return { t: 'char', test: cls };
    }
    return this.literal(this.escapedCode(), flags);
  }

  /** The character of an escape after its `\` (in or out of a class); throws on what RE2 refuses. */
  escapedCode(): number {
    const e = this.src[this.i++];
    if (e === undefined) throw new Malformed();
    if (e in CHAR_ESCAPES && !(e === '0' && isDigit(this.src.charCodeAt(this.i)))) return CHAR_ESCAPES[e]!;
    if (e === 'x' || e === 'u') {
      const m = e === 'x' ? /^(?:([0-9a-fA-F]{2})|\{([0-9a-fA-F]{1,4})\})/.exec(this.src.slice(this.i, this.i + 6)) : /^([0-9a-fA-F]{4})/.exec(this.src.slice(this.i, this.i + 4));
      if (!m) throw new Malformed();
      this.i += m[0].length;
      return parseInt(m[1] ?? m[2]!, 16);
    }
    const code = e.charCodeAt(0);
    // quoted punctuation is itself; letters and digits are escapes RE2 does not have (\1, \p)
    if (code < 128 && /[A-Za-z0-9]/.test(e)) throw new Malformed();
    return code;
  }

  /** A class after its `[`: items, ranges, `[:name:]`, `\d`-like escapes; `]` first is a literal. */
  charClass(flags: Flags): Test {
    const neg = this.src[this.i] === '^';
    if (neg) this.i++;
    const tests: Test[] = [];
    let first = true;
    for (;;) {
      const c = this.src[this.i];
      if (c === undefined) throw new Malformed();
      if (c === ']' && !first) break;
      first = false;
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(this.src.slice(this.i, this.i + 12));
      if (posix) {
        const f = POSIX[posix[2]!];
        if (!f) throw new Malformed();
        tests.push(posix[1] ? not(f) : f);
        this.i += posix[0].length;
        continue;
      }
      const esc = c === '\\' ? CLASS_ESCAPES[this.src[this.i + 1] ?? ''] : undefined;
      if (esc) {
        tests.push(esc);
        this.i += 2;
        continue;
      }
      const lo = this.classChar();
      if (this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.src[this.i + 1] !== undefined) {
        this.i++;
        const hi = this.classChar();
        if (hi < lo) throw new Malformed();
        tests.push(range(lo, hi));
      } else tests.push(range(lo, lo));
    }
    this.i++;
    // the other case joins the set before a `^` takes its complement: (?i)[^a] takes neither a nor A
    const inSet = folded((x) => tests.some((f) => f(x)), flags);
    return neg ? not(inSet) : inSet;
  }

  classChar(): number {
    const c = this.src[this.i++]!;
    if (c !== '\\') return c.charCodeAt(0);
    if (this.src[this.i] === 'b') {
      this.i++;
      return 8; // backspace inside a class, as in a RegExp
    }
    return this.escapedCode();
  }
}

/** Appends the program of `n` to `prog`; throws Malformed once it passes MAX_REGEX_PROGRAM. */
function emit(n: Node, prog: AutomatonOp[]): void {
  if (prog.length > MAX_REGEX_PROGRAM) throw new Malformed();
  switch (n.t) {
    case 'char': prog.push({ k: 'char', test: n.test }); return;
    case 'assert': prog.push({ k: 'assert', at: n.at }); return;
    case 'cat': for (const item of n.items) emit(item, prog); return;
    case 'alt': {
      const jumps: { k: 'jmp'; to: number }[] = [];
      n.items.forEach((item, k) => {
        if (k === n.items.length - 1) return emit(item, prog);
        const split = { k: 'split' as const, a: prog.length + 1, b: -1 };
        prog.push(split);
        emit(item, prog);
        const jmp = { k: 'jmp' as const, to: -1 };
        prog.push(jmp);
        jumps.push(jmp);
        split.b = prog.length;
      });
      for (const j of jumps) j.to = prog.length;
      return;
    }
    case 'rep': return emitRepeat(n.node, n.min, n.max, prog);
  }
}

/** `min` copies, then a loop (`max` infinite) or `max - min` optional copies. */
function emitRepeat(node: Node, min: number, max: number, prog: AutomatonOp[]): void {
  for (let k = 0; k < min; k++) emit(node, prog);
  if (max === Infinity) {
    const l = prog.length;
    const split = { k: 'split' as const, a: l + 1, b: -1 };
    prog.push(split);
    emit(node, prog);
    prog.push({ k: 'jmp', to: l });
    split.b = prog.length;
    return;
  }
  const splits: { k: 'split'; a: number; b: number }[] = [];
  for (let k = min; k < max; k++) {
    const split = { k: 'split' as const, a: prog.length + 1, b: -1 };
    prog.push(split);
    splits.push(split);
    emit(node, prog);
  }
  for (const s of splits) s.b = prog.length;
}

/**
 * Compiles a pattern of RE2's syntax (see the top of this file) for linear-time tests; undefined
 * when it is malformed, uses what RE2 lacks (backreferences, lookaround), or compiles to more than
 * `MAX_REGEX_PROGRAM` steps. A test takes time in proportion to the text's length times the
 * program's, whatever the pattern.
 *
 * @example
 * linearRegex('^cam-(a|b)\\d+$')!.test('cam-b12'); // true
 * linearRegex('^(.?){40}z$')!.test('a'.repeat(40)); // false, at once
 * linearRegex('(a)\\1'); // undefined: a backreference
 */
export function linearRegex(source: string): LinearRegex | undefined {
  if (source.length > MAX_REGEX_PROGRAM) return undefined;
  const prog: AutomatonOp[] = [];
  try {
    emit(new Parser(source).parse(), prog);
    if (prog.length > MAX_REGEX_PROGRAM) return undefined;
  } catch (err) {
    if (err instanceof Malformed || err instanceof RangeError) return undefined; // RangeError: nesting too deep
    throw err;
  }
  prog.push({ k: 'match' });
  const automaton = new Automaton(prog);
  return {
    test: (text: string) => automaton.run(text, true),
    get steps() { return automaton.steps; },
    size: prog.length,
  };
}
