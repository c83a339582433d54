import t from 'tap';
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
