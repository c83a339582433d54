import t from 'tap';
import { rng } from '../helpers/seeded.ts';
import { GlobMatchers, globMatcher } from '../../sdk/index.ts';
import { usedAfterGc } from '../helpers/memory.ts';

const KB = 1024;

t.test('globs match as the filesystems list them', async (t) => {
  const m = globMatcher('/live/*.ts');
  t.same(['/live/a.ts', '/live/.b.ts', '/live/x/c.ts', '/other/a.ts'].map((p) => m(p)), [true, true, false, false], '* stays in a folder, dotfiles match');
  t.ok(globMatcher('/live/**')('/live/x/y.ts'), '** crosses folders');
});

t.test('the least recently used glob goes first', async (t) => {
  const globs = new GlobMatchers(3);
  const a = globs.get('/a*');
  const b = globs.get('/b*');
  globs.get('/c*');
  t.equal(globs.get('/a*'), a, 'a hit is the same matcher (and now the most recent)');
  globs.get('/d*');
  t.equal(globs.size, 3);
  t.equal(globs.get('/a*'), a, 'the recently used one stayed');
  const again = globs.get('/b*');
  t.not(again, b, 'the least recently used (/b*) was dropped: compiled again');
  t.ok(again('/b1'), 'and matches as before');
});

t.test('10,000 one-off globs (the purges of deleted processes) keep a bounded cache', async (t) => {
  // a compiled glob is about 3 KB; before, a filesystem kept 16,384 of them (about 50 MB)
  const globs = new GlobMatchers();
  for (let i = 0; i < 300; i++) globs.get(`/warm-${i}_*.ts`);
  const before = await usedAfterGc();
  for (let i = 0; i < 10_000; i++) globs.get(`/process-${i}_*.ts`);
  const heap = (await usedAfterGc()).heap - before.heap;
  t.ok(globs.size <= 256, `${globs.size} kept`);
  t.ok(heap < 512 * KB, `heap +${(heap / KB).toFixed(0)} KB (before the fix about 30 MB)`);
});

// the former matcher (picomatch) as the oracle, on the globs and paths filesystems see: paths
// from the root, no empty, `.` or `..` segments, no trailing slash
t.test('the same answers as the former matcher on 20,000 generated globs and paths', async (t) => {
  const { default: picomatch } = await import('picomatch');
  const r = rng(47);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const SEG_ATOMS = ['a', 'b', 'ab', '.', '-', '*', '?', '[ab]', '[^a]', '[a-c]', '{a,b}', '{a,bb*}', 'x*', '*.ts'];
  const segment = () => Array.from({ length: 1 + Math.floor(r() * 3) }, () => pick(SEG_ATOMS)).join('');
  const glob = () => {
    const n = 1 + Math.floor(r() * 4);
    const segs = Array.from({ length: n }, () => (r() < 0.2 ? '**' : segment()));
    return (r() < 0.9 ? '/' : '') + segs.join('/');
  };
  const NAMES = ['a', 'b', 'ab', 'ba', '.a', 'a.ts', 'x', 'xa', 'bb', 'a-b', 'c', 'aab'];
  const path = () => '/' + Array.from({ length: 1 + Math.floor(r() * 4) }, () => pick(NAMES)).join('/');
  const wrong: string[] = [];
  let n = 0;
  for (let i = 0; i < 2000; i++) {
    let g = glob();
    // the former matcher's quirk: a folder ending in `*` before a last `/**` never matched itself
    while (/\*(\/\*\*)+$/.test(g)) g = glob();
    const mine = globMatcher(g);
    const theirs = picomatch(g, { dot: true });
    for (let j = 0; j < 10; j++) {
      const p = path();
      n++;
      if (mine(p) !== theirs(p)) wrong.push(`${g} ~ ${p}: ${mine(p)}`);
    }
  }
  t.same(wrong.slice(0, 10), [], `${n} compared`);
});

t.test('clients\' globs, and globs that made the former matcher backtrack for minutes', async (t) => {
  const cases: [string, string, boolean][] = [
    ['/live/*.ts', '/live/a.ts', true], ['/live/*', '/live/', false], ['/a/**', '/a', true], ['/a/**', '/a/x/y', true], ['/a/**/b', '/a/b', true],
    ['/a/**/b', '/a/x/y/b', true], ['**/b', 'x/y/b', true], ['**/b', '/b', true], ['**', '/a/b', true], ['/{a,b}/*.ts', '/b/x.ts', true],
    ['/x/**b', '/x/ab', true], ['/x/**b', '/x/y/ab', false], ['/a\\*', '/a*', true], ['./a/*', 'a/b', true], ['/a_*.{ts,m3u8}', '/a_1.m3u8', true],
    ['/[', '/[', true], ['/{a,b', '/a', false],
  ];
  for (const [g, p, ok] of cases) t.equal(globMatcher(g)(p), ok, `${g} ~ ${p}`);
  const name = `/${'a'.repeat(40)}y`;
  for (const g of [`/${'*a'.repeat(12)}x`, `/**/${'*a'.repeat(30)}x`, `/${'**/'.repeat(50)}x`]) t.equal(globMatcher(g)(name), false, `${g.slice(0, 30)}... at once`);
  t.equal(globMatcher(`/${'*'.repeat(5000)}`)('/a'), false, 'too long: nothing');
});
