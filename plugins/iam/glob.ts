/*
 * Globs of IAM resources, with `/` as the separator (the successor's rule, issue 49): `*` any run of
 * characters but `/`, `**` any run including `/`, `?` one character but `/`, `[abc]`, `[a-z]`,
 * `[!abc]` one character of (or not of) a class, `{a,b}` one of the alternatives (nested, each a
 * glob), `\x` the character x itself. A pattern compiles once, to the literal it is (a map lookup
 * decides it) or to token lists; matching walks the tokens over the reachable positions of the
 * subject (a set of offsets, no backtracking): its cost grows with pattern length times subject
 * length, never exponentially, whatever stars an author writes.
 */

/** Longest pattern accepted (characters). */
export const MAX_GLOB_LENGTH = 1024;
/** Most alternatives one pattern may expand to (`{a,b}{c,d}` is 4). */
export const MAX_ALTERNATIVES = 64;

type Token =
  | { k: 'lit'; s: string }
  | { k: 'one' }
  | { k: 'star' }
  | { k: 'any' }
  | { k: 'class'; ranges: Array<[number, number]>; not: boolean };

/** A compiled glob: `literal` set when it has no special character (match by equality). */
export interface Glob {
  source: string;
  literal?: string;
  match(subject: string): boolean;
}

export class GlobError extends Error {}

/** Compiles `pattern`; throws GlobError naming what is wrong (the API answers it with 400). */
export function compileGlob(pattern: string): Glob {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobError(`longer than ${MAX_GLOB_LENGTH} characters`);
  const alts = expand(pattern);
  const lists = alts.map(tokens);
  if (lists.length === 1 && lists[0]!.every((t) => t.k === 'lit')) {
    const literal = lists[0]!.map((t) => (t as { s: string }).s).join('');
    return { source: pattern, literal, match: (s) => s === literal };
  }
  return { source: pattern, match: (s) => lists.some((l) => run(l, s)) };
}

/** The pattern with its `{a,b}` groups expanded into plain alternatives. */
function expand(p: string): string[] {
  let out = [''];
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') {
      if (i + 1 >= p.length) throw new GlobError('a trailing backslash');
      out = out.map((o) => o + p.slice(i, i + 2));
      i++;
    } else if (c === '[') {
      const end = classEnd(p, i);
      out = out.map((o) => o + p.slice(i, end + 1));
      i = end;
    } else if (c === '{') {
      const { parts, end } = group(p, i);
      const inner = parts.flatMap(expand);
      out = out.flatMap((o) => inner.map((x) => o + x));
      if (out.length > MAX_ALTERNATIVES) throw new GlobError(`more than ${MAX_ALTERNATIVES} alternatives`);
      i = end;
    } else if (c === '}' || c === ',') {
      // outside a group: the character itself
      out = out.map((o) => `${o}\\${c}`);
    } else out = out.map((o) => o + c);
  }
  return out;
}

/** The alternatives of the group opening at `at` and the offset of its `}`. */
function group(p: string, at: number): { parts: string[]; end: number } {
  const parts: string[] = [];
  let depth = 0;
  let start = at + 1;
  for (let i = at + 1; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') i++;
    else if (c === '[') i = classEnd(p, i);
    else if (c === '{') depth++;
    else if (c === '}' && depth > 0) depth--;
    else if ((c === ',' || c === '}') && depth === 0) {
      parts.push(p.slice(start, i));
      start = i + 1;
      if (c === '}') return { parts, end: i };
    }
  }
  throw new GlobError('a { without its }');
}

/** The offset of the `]` closing the class that opens at `at`. */
function classEnd(p: string, at: number): number {
  let i = at + 1;
  if (p[i] === '!') i++;
  if (p[i] === ']') i++; // a leading ] is a member
  for (; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === ']') return i;
  }
  throw new GlobError('a [ without its ]');
}

/** The tokens of one alternative (no groups left). */
function tokens(p: string): Token[] {
  const out: Token[] = [];
  const lit = (s: string) => {
    const last = out[out.length - 1];
    if (last?.k === 'lit') last.s += s;
    else out.push({ k: 'lit', s });
  };
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\') lit(p[++i]!);
    else if (c === '?') out.push({ k: 'one' });
    else if (c === '*') {
      if (p[i + 1] === '*') {
        while (p[i + 1] === '*') i++;
        out.push({ k: 'any' });
      } else out.push({ k: 'star' });
    } else if (c === '[') {
      const end = classEnd(p, i);
      out.push(charClass(p.slice(i + 1, end)));
      i = end;
    } else lit(c);
  }
  return out;
}

function charClass(body: string): Token {
  const not = body.startsWith('!');
  const s = not ? body.slice(1) : body;
  const ranges: Array<[number, number]> = [];
  for (let i = 0; i < s.length; i++) {
    let a = s[i]!;
    if (a === '\\') a = s[++i]!;
    if (s[i + 1] === '-' && i + 2 < s.length) {
      let b = s[i + 2]!;
      let skip = 2;
      if (b === '\\') { b = s[i + 3]!; skip = 3; }
      if (b.charCodeAt(0) < a.charCodeAt(0)) throw new GlobError(`the range ${a}-${b} runs backwards`);
      ranges.push([a.charCodeAt(0), b.charCodeAt(0)]);
      i += skip;
    } else ranges.push([a.charCodeAt(0), a.charCodeAt(0)]);
  }
  if (ranges.length === 0) throw new GlobError('an empty [] class');
  return { k: 'class', ranges, not };
}

/** Whether the tokens match all of `s`: the set of offsets reachable after each token. */
function run(list: readonly Token[], s: string): boolean {
  const n = s.length;
  let cur = new Uint8Array(n + 1);
  let next = new Uint8Array(n + 1);
  cur[0] = 1;
  for (const t of list) {
    next.fill(0);
    let any = false;
    if (t.k === 'star' || t.k === 'any') {
      let carry = false;
      for (let i = 0; i <= n; i++) {
        if (cur[i]) carry = true;
        if (carry) { next[i] = 1; any = true; }
        if (i < n && t.k === 'star' && s.charCodeAt(i) === 47) carry = false;
      }
    } else {
      for (let i = 0; i < n; i++) {
        if (!cur[i]) continue;
        if (t.k === 'lit') {
          if (s.startsWith(t.s, i)) { next[i + t.s.length] = 1; any = true; }
          continue;
        }
        const c = s.charCodeAt(i);
        if (c === 47) continue; // neither ? nor a class matches the separator
        if (t.k === 'one' || inClass(t, c)) { next[i + 1] = 1; any = true; }
      }
    }
    if (!any) return false;
    [cur, next] = [next, cur];
  }
  return cur[n] === 1;
}

function inClass(t: { ranges: Array<[number, number]>; not: boolean }, c: number): boolean {
  let hit = false;
  for (const [a, b] of t.ranges) if (c >= a && c <= b) { hit = true; break; }
  return hit !== t.not;
}
