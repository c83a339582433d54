import t from 'tap';
import { globToRegExp, MAX_GLOB_LENGTH, nameGlob } from '../../sdk/name-glob.ts';

/**
 * The former translation into a backtracking RegExp, as the oracle for small globs (it answers
 * the same; it only takes exponential time on globs of many stars).
 */
function oracle(glob: string): RegExp | undefined {
  let re = '';
  let depth = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      const n = glob[++i];
      if (n === undefined) return undefined;
      re += n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) return undefined;
      let cls = glob.slice(i + 1, end);
      if (cls.startsWith('!')) cls = '^' + cls.slice(1);
      re += `[${cls.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '{') { re += '(?:'; depth++; }
    else if (c === '}' && depth > 0) { re += ')'; depth--; }
    else if (c === ',' && depth > 0) re += '|';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  if (depth !== 0) return undefined;
  try {
    return new RegExp(`^${re}$`, 's');
  } catch {
    return undefined;
  }
}

t.test('the cases clients use', async (t) => {
  const cases: [string, string, boolean][] = [
    ['foo_*', 'foo_a/b', true], ['*_bbb_*', 'x_bbb_y', true], ['?x', 'ax', true], ['?x', 'aax', false], ['[ab]c', 'bc', true],
    ['[!ab]c', 'bc', false], ['[^ab]c', 'xc', true], ['[a-c]x', 'bx', true], ['[a-c]x', 'dx', false], ['{a,b}c', 'ac', true],
    ['{a,b}c', 'cc', false], ['{a,b}c', 'c', false], ['{a,}c', 'c', true], ['{a,{b,c}d}e', 'cde', true], ['a.b', 'axb', false],
    ['a\\*', 'a*', true], ['a\\*', 'ab', false], ['', '', true], ['', 'a', false], ['*', '', true], ['restreamer-ui:*', 'restreamer-ui:ingest:x', true],
    ['a}b', 'a}b', true], ['a,b', 'a,b', true], ['[]a]', ']', true], ['cam-\u00e9*', 'cam-\u00e9t\u00e9', true],
  ];
  for (const [glob, s, ok] of cases) t.equal(nameGlob(glob)!.test(s), ok, `${glob} ~ ${JSON.stringify(s)}`);
  for (const bad of ['[ab', '{a,b', 'a\\', '{a', '[z-a]']) t.equal(nameGlob(bad), undefined, `malformed ${bad}`);
  t.equal(globToRegExp, nameGlob, 'the former name still works');
});

t.test('the same answers as the former RegExp on 20,000 generated globs and names', async (t) => {
  let seed = 12345;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const atoms = ['a', 'b', '/', '.', '*', '?', '[ab]', '[!a]', '[a-c]', '{a,b}', '{a,b*,}', '\\*', '{,{a,?}b}'];
  let same = 0;
  let compared = 0;
  for (let i = 0; i < 20_000; i++) {
    const glob = Array.from({ length: 1 + rnd(5) }, () => atoms[rnd(atoms.length)]).join('');
    const name = Array.from({ length: rnd(7) }, () => 'ab/.c*'[rnd(6)]).join('');
    const re = oracle(glob);
    const g = nameGlob(glob);
    if (!re || !g) {
      t.equal(!g, !re, `malformed alike: ${glob}`);
      continue;
    }
    compared++;
    if (g.test(name) === re.test(name)) same++;
    else t.fail(`${glob} ~ ${JSON.stringify(name)}: ${g.test(name)}, the RegExp ${re.test(name)}`);
  }
  t.equal(same, compared, `${compared} compared`);
});

t.test('globs that made the RegExp backtrack for minutes answer at once', async (t) => {
  const ids = Array.from({ length: 200 }, (_, i) => `restreamer-ui:ingest:${'a'.repeat(20)}-${i}`);
  // with the RegExp the first took 31 s on these ids, the second did not end (the test's timeout fails it)
  for (const glob of [`${'*'.repeat(11)}x`, `${'*'.repeat(MAX_GLOB_LENGTH - 1)}x`, `${'*a'.repeat(200)}x`]) {
    t.equal(ids.filter((id) => nameGlob(glob)!.test(id)).length, 0, `${glob.length} characters, no id ends in x`);
  }
  t.equal(nameGlob('*'.repeat(MAX_GLOB_LENGTH + 1)), undefined, 'longer than the bound: malformed');
  t.ok(nameGlob(`${'*'.repeat(1000)}9`)!.test(ids[9]!), 'and still matches');
});
