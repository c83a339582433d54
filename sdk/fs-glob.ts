import { Automaton, classTest, type AutomatonOp } from './automaton.ts';

/*
 * Path globs, as every filesystem lists with them and cleanup rules match: compiled into a Thompson
 * automaton (`automaton.ts`), so a match takes time in proportion to the path times the glob. The
 * backtracking RegExp of a glob library took 2.8 s for `/*a*a*a*a*a*a*a*a*a*a*a*x` against one
 * 37-character name (each star 4 times more; 12 stars on 40 characters: 305 s), with the service held.
 * The syntax is the reference's (gobwas/glob with `/` as separator) as picomatch read it before:
 * `*` any characters but `/` (at least one when it is a whole segment), `**` as a whole segment any
 * number of folders (`/a/**` matches `/a` too, `/a/**\/b` matches `/a/b`), elsewhere as `*`; `?` one
 * character but `/`; `[abc]`, `[a-z]`, `[!x]` / `[^x]` a class; `{a,b}` alternatives (nested);
 * `\` quotes the next character. Globs longer than `MAX_PATH_GLOB` match nothing.
 */

type Op = AutomatonOp;
const notSlash = (c: number) => c !== 47;
const anyChar = () => true;
const isChar = (code: number) => (c: number) => c === code;

class Malformed extends Error {}

/** Appends `any*` (or `any+` when `atLeastOne`) of characters passing `test`. */
function star(prog: Op[], test: (c: number) => boolean, atLeastOne: boolean): void {
  if (atLeastOne) prog.push({ k: 'char', test });
  const l = prog.length;
  prog.push({ k: 'split', a: l + 1, b: l + 3 }, { k: 'char', test }, { k: 'jmp', to: l });
}

/** Optional part: `split` over what `emit` appends. */
function optional(prog: Op[], emit: () => void): void {
  const split = { k: 'split' as const, a: prog.length + 1, b: -1 };
  prog.push(split);
  emit();
  split.b = prog.length;
}

class GlobCompiler {
  readonly g: string;
  i = 0;
  readonly prog: Op[] = [];
  constructor(glob: string) {
    this.g = glob;
  }

  /** A sequence up to the end, or to the `}` / `,` ending the group it is in. */
  seq(inGroup: boolean): void {
    const g = this.g;
    while (this.i < g.length) {
      const c = g[this.i]!;
      if (inGroup && (c === '}' || c === ',')) return;
      if (c === '*') this.stars();
      else if (c === '?') {
        this.prog.push({ k: 'char', test: notSlash });
        this.i++;
      } else if (c === '[' && g.indexOf(']', this.i + 2) > 0) {
        const end = g.indexOf(']', this.i + 2);
        this.prog.push({ k: 'char', test: classTest(g.slice(this.i + 1, end), true, 47) });
        this.i = end + 1;
      } else if (c === '{') this.group();
      else {
        if (c === '\\' && this.i + 1 < g.length) this.i++;
        this.prog.push({ k: 'char', test: isChar(g.charCodeAt(this.i)) });
        this.i++;
      }
    }
    if (inGroup) throw new Malformed();
  }

  /** `*` or `**` at `i`; a `**` that is a whole segment takes folders, with its slashes. */
  stars(): void {
    const g = this.g;
    let end = this.i;
    while (g[end] === '*') end++;
    const segStart = this.i === 0 || g[this.i - 1] === '/';
    const segEnd = end === g.length || g[end] === '/' || g[end] === '}' || g[end] === ',';
    const prog = this.prog;
    if (end - this.i >= 2 && segStart && segEnd) {
      const slashAfter = g[end] === '/';
      if (this.i === 1 && slashAfter) {
        // `/**\/` first: at least one folder, as before (`/**\/b` is not `/b`)
        star(prog, anyChar, true);
        prog.push({ k: 'char', test: isChar(47) });
        this.i = end + 1;
      } else if (this.i > 0 && slashAfter) {
        // `/**\/`: the `/` before is emitted; folders then `/`, or nothing (the next `/` is this one)
        optional(prog, () => { star(prog, anyChar, false); prog.push({ k: 'char', test: isChar(47) }); });
        this.i = end + 1;
      } else if (this.i > 0) {
        // `/**` at the end: the folder itself too (its `/` is optional), or anything under it
        prog.pop();
        optional(prog, () => { prog.push({ k: 'char', test: isChar(47) }); star(prog, anyChar, false); });
        this.i = end;
      } else if (slashAfter) {
        // `**\/` first: any folders (with their `/`), or none
        optional(prog, () => { star(prog, anyChar, false); prog.push({ k: 'char', test: isChar(47) }); });
        this.i = end + 1;
      } else {
        star(prog, anyChar, false);
        this.i = end;
      }
      return;
    }
    star(prog, notSlash, segStart && segEnd);
    this.i = end;
  }

  /** `{a,b,...}` from its `{`. */
  group(): void {
    this.i++;
    const jumps: { k: 'jmp'; to: number }[] = [];
    for (;;) {
      const split = { k: 'split' as const, a: this.prog.length + 1, b: -1 };
      this.prog.push(split);
      this.seq(true);
      const jmp = { k: 'jmp' as const, to: -1 };
      this.prog.push(jmp);
      jumps.push(jmp);
      if (this.g[this.i] === '}') {
        split.b = split.a;
        break;
      }
      split.b = this.prog.length;
      this.i++;
    }
    for (const j of jumps) j.to = this.prog.length;
    this.i++;
  }
}

/**
 * Globs longer than this match nothing (a listing's or a rule's glob is a few dozen characters).
 *
 * @example
 * globMatcher('/' + '*'.repeat(MAX_PATH_GLOB))('/a'); // false
 */
export const MAX_PATH_GLOB = 4096;

/**
 * A compiled glob as every filesystem matches them: `*` stays in a folder, `**` crosses, dotfiles
 * match; in linear time (see the top of this file). A malformed glob matches nothing.
 * Keep it as long as the glob is used (a rule's, a listing's); `GlobMatchers` keeps the recent ones.
 *
 * @example
 * const match = globMatcher('/live/*.ts');
 * match('/live/a.ts'); // true
 * match('/live/x/a.ts'); // false
 */
export function globMatcher(glob: string): (path: string) => boolean {
  if (glob.length > MAX_PATH_GLOB) return () => false;
  const c = new GlobCompiler(glob.startsWith('./') ? glob.slice(2) : glob);
  try {
    c.seq(false);
  } catch (err) {
    if (err instanceof Malformed || err instanceof RangeError) return () => false;
    throw err;
  }
  c.prog.push({ k: 'match' });
  const a = new Automaton(c.prog);
  return (path) => a.run(path, false);
}

/**
 * The globs a filesystem was listed with lately, compiled (`globMatcher`): a client listing the
 * same glob again, or a cleanup tick, does not compile it each time, which costs more than the
 * listing. The least recently used goes first once `max` are kept: a compiled glob is about
 * 3 KB, and the globs of deleted processes (their `purge_on_delete` listings) must not pile up
 * (issue 46: kept until 16,384 of them, 50 MB). Something that needs a fixed set of globs every
 * few seconds keeps its own matchers (the process engine's cleanup rules do).
 *
 * @example
 * readonly #globs = new GlobMatchers();
 * list(glob) { const match = this.#globs.get(glob); return names.filter((n) => match(n)); }
 */
export class GlobMatchers {
  readonly #cache = new Map<string, (path: string) => boolean>();
  readonly #max: number;

  constructor(max = 256) {
    this.#max = Math.max(1, max);
  }

  get size(): number { return this.#cache.size; }

  get(glob: string): (path: string) => boolean {
    let m = this.#cache.get(glob);
    if (m !== undefined) {
      // most recently used last: a Map keeps insertion order
      this.#cache.delete(glob);
    } else {
      m = globMatcher(glob);
      if (this.#cache.size >= this.#max) this.#cache.delete(this.#cache.keys().next().value!);
    }
    this.#cache.set(glob, m);
    return m;
  }
}
