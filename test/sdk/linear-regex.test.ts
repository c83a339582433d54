import t from 'tap';
import { rng } from '../helpers/seeded.ts';
import { linearRegex, MAX_REGEX_PROGRAM } from '../../sdk/linear-regex.ts';

const ATOMS = ['a', 'b', 'A', '0', '-', '.', '\\d', '\\w', '\\s', '\\W', '\\.', '[ab]', '[^a]', '[a-c0]', '[\\d_]', '\\b', '^', '$', 'x'];
const QUANT = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?'];
const GROUP_QUANT = ['', '', '?', '{2}', '{0,2}', '??'];

/** A random pattern of the syntax a RegExp and RE2 share (no `[]`, no lookaround, no backreference). */
function pattern(r: () => number, depth: number): string {
  let out = '';
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    let atom: string;
    let q: string;
    // a group's repeat is bounded: the oracle (a backtracking RegExp) takes seconds on `(\w*?.*){2})+`
    if (depth < 2 && r() < 0.25) {
      atom = `(${pattern(r, depth + 1)}${r() < 0.5 ? `|${pattern(r, depth + 1)}` : ''})`;
      q = GROUP_QUANT[Math.floor(r() * GROUP_QUANT.length)]!;
    } else {
      atom = ATOMS[Math.floor(r() * ATOMS.length)]!;
      q = ['\\b', '^', '$'].includes(atom) ? '' : QUANT[Math.floor(r() * QUANT.length)]!;
    }
    out += atom + q;
  }
  return out;
}

const TEXT = 'abAB0 _-.x\n';
function text(r: () => number): string {
  let s = '';
  const n = Math.floor(r() * 9);
  for (let k = 0; k < n; k++) s += TEXT[Math.floor(r() * TEXT.length)];
  return s;
}

t.test('the same answers as a RegExp on 20,000 generated cases', async (t) => {
  const r = rng(46);
  let compared = 0;
  const wrong: string[] = [];
  for (let k = 0; k < 2000; k++) {
    const p = pattern(r, 0);
    const flags = r() < 0.2 ? 'i' : r() < 0.1 ? 'm' : r() < 0.1 ? 's' : '';
    const mine = linearRegex(flags ? `(?${flags})${p}` : p);
    const theirs = new RegExp(p, flags);
    if (!mine) {
      wrong.push(`refused ${p}`);
      continue;
    }
    for (let j = 0; j < 10; j++) {
      const s = text(r);
      compared++;
      if (mine.test(s) !== theirs.test(s)) wrong.push(`/${p}/${flags} on ${JSON.stringify(s)}: ${mine.test(s)}`);
    }
  }
  t.same(wrong.slice(0, 10), [], `${compared} compared`);
});

t.test('what clients send: anchors, classes, RE2 forms', async (t) => {
  const cases: [string, string, boolean][] = [
    ['^test$', 'test', true], ['^test$', 'test2', false], ['fps', 'xfpsx', true], ['^(running|finished)$', 'finished', true],
    ['[[:digit:]]+', 'ab12', true], ['^[[:alpha:]]+$', 'ab1', false], ['^[[:^digit:]]$', 'a', true], ['(?P<id>cam)-\\d', 'cam-1', true],
    ['(?<id>cam)', 'cam', true], ['\\Qa.b\\E', 'a.b', true], ['\\Qa.b\\E', 'axb', false], ['\\Aab\\z', 'ab', true], ['\\Aab\\z', 'ab\n', false],
    ['(?i)^CAM$', 'cam', true], ['(?i:a)b', 'Ab', true], ['(?i:a)b', 'AB', false], ['(?i)[^a]', 'A', false], ['a(?i)b', 'aB', true],
    ['(?s)a.b', 'a\nb', true], ['a.b', 'a\nb', false], ['(?m)^b$', 'a\nb\nc', true], ['^b$', 'a\nb\nc', false],
    ['\\x41\\x{42}\\u0043', 'ABC', true], ['a{,2}', 'a{,2}', true], ['x{2}', 'xx', true], ['[]a]', ']', true], ['[a-]', '-', true],
    ['', '', true], ['', 'abc', true], ['a|', 'zzz', true], ['()', 'x', true], ['\\t\\n', '\t\n', true], ['[\\b]', '\b', true],
    ['^(ab)*c$', 'ababc', true], ['^(a|b)+$', 'abba', true], ['^((a)*)*b$', 'aab', true], ['^(a*)*$', 'b', false], ['(a*)+?x', 'aaax', true],
    ['caf\u00e9', 'CAF\u00c9', false], ['(?i)caf\u00e9', 'CAF\u00c9', true],
  ];
  for (const [p, s, ok] of cases) t.equal(linearRegex(p)?.test(s), ok, `${p} ~ ${JSON.stringify(s)}`);
});

t.test('what RE2 refuses is refused: the label then matches nothing', async (t) => {
  for (const bad of ['(a)\\1', '(?=a)', '(?!a)', '(?<=a)b', 'a**', 'a{2}{3}', '*a', 'a{2,1}', 'a{1001}', '(a', 'a)', '[a', '[z-a]', '\\p{L}',
    '\\k', '\\', 'a{1000}{1000}', '(a{100}){200}', '\\01', '(?x)a', '^*', 'x'.repeat(MAX_REGEX_PROGRAM + 1), '('.repeat(50_000)]) {
    t.equal(linearRegex(bad), undefined, `refused: ${bad.slice(0, 40)}`);
  }
});

t.test('a pattern that makes a RegExp backtrack for minutes takes steps in proportion to the text', async (t) => {
  for (const p of ['^(.?){40}z$', '^(a+)+$', '(x+x+)+y', '^(\\w|\\d)*!$']) {
    const re = linearRegex(p)!;
    const text = 'a'.repeat(40) + 'x'.repeat(40);
    t.equal(re.test(text), false, p);
    t.ok(re.steps < (text.length + 2) * 400, `${p}: ${re.steps} steps`);
  }
  const re = linearRegex('ab')!;
  re.test('xxab');
  const after = re.steps;
  re.test('xxab');
  t.equal(re.steps, after * 2, 'steps add up over tests');
});
