import t from 'tap';
import { compileGlob, GlobError, MAX_ALTERNATIVES, MAX_GLOB_LENGTH } from '../../../plugins/iam/glob.ts';

/*
 * Issue 49, the pure part: IAM's resource globs with `/` as the separator, as the successor's
 * (gobwas/glob with '/'): what each form matches and what it does not, malformed patterns refused
 * with a reason, and patterns an author could write to make a backtracking matcher take forever
 * decided by a walk that cannot (the subject below would take a regular expression with the same
 * stars longer than this test's timeout).
 */

const cases: Array<[string, string[], string[]]> = [
  ['live/cam', ['live/cam'], ['live/cam2', 'live', 'Live/cam']],
  ['live/*', ['live/a', 'live/', 'live/a.b'], ['live/a/b', 'live', 'lives/a']],
  ['live/**', ['live/a', 'live/a/b/c', 'live/'], ['live', 'other/live/a']],
  ['/api/v3/process/**', ['/api/v3/process/x', '/api/v3/process/x/state'], ['/api/v3/processes', '/api/v3/process']],
  ['**', ['', 'a', 'a/b/c'], []],
  ['*', ['', 'abc'], ['a/b']],
  ['cam?', ['cam1', 'camX'], ['cam', 'cam12', 'cam/']],
  ['cam[0-9]', ['cam0', 'cam9'], ['cama', 'cam10']],
  ['cam[!0-9]', ['cama'], ['cam5', 'cam/']],
  ['cam[]x]', ['cam]', 'camx'], ['camy']],
  ['{live,vod}/a', ['live/a', 'vod/a'], ['tv/a', 'live,vod/a']],
  ['x/{a,b{1,2}}/y', ['x/a/y', 'x/b1/y', 'x/b2/y'], ['x/b/y', 'x/b3/y']],
  ['a\\*b', ['a*b'], ['axb']],
  ['a,b}', ['a,b}'], ['a']],
  ['*/customer-a/*', ['live/customer-a/cam'], ['live/customer-a/cam/x', 'live/customer-b/cam']],
  ['live/customer-a/*', ['live/customer-a/x'], ['live/customer-ab/x']],
  ['a*b*c', ['abc', 'aXbYc', 'abbc'], ['ab/c', 'acb']],
  ['**/index.m3u8', ['a/index.m3u8', 'a/b/index.m3u8', '/index.m3u8'], ['index.m3u8', 'a/index.m3u8x']],
];

t.test('what each form matches and what it does not', async (t) => {
  for (const [pattern, yes, no] of cases) {
    const g = compileGlob(pattern);
    for (const s of yes) t.ok(g.match(s), `${pattern} matches ${JSON.stringify(s)}`);
    for (const s of no) t.notOk(g.match(s), `${pattern} does not match ${JSON.stringify(s)}`);
  }
});

t.test('a pattern without a special character is a literal (decided by equality)', async (t) => {
  t.equal(compileGlob('live/cam').literal, 'live/cam');
  t.equal(compileGlob('a\\*b').literal, 'a*b', 'an escaped star is a character');
  t.equal(compileGlob('live/*').literal, undefined);
});

t.test('malformed patterns are refused with the reason', async (t) => {
  for (const [p, why] of [['a[bc', /without its \]/], ['a{b,c', /without its \}/], ['a\\', /trailing backslash/], ['[z-a]', /backwards/],
    ['x'.repeat(MAX_GLOB_LENGTH + 1), /longer than/], ['{a,b}'.repeat(7), new RegExp(`more than ${MAX_ALTERNATIVES}`)]] as const) {
    let err: unknown;
    try { compileGlob(p); } catch (e) { err = e; }
    t.ok(err instanceof GlobError, `${p.slice(0, 20)} refused`);
    t.match((err as Error).message, why, 'with the reason');
  }
});

t.test('star-heavy patterns on long subjects are decided without backtracking', async (t) => {
  const g = compileGlob(`${'*a'.repeat(30)}b`);
  t.notOk(g.match('a'.repeat(5000)), 'no b: no match');
  t.ok(g.match(`${'a'.repeat(5000)}b`), 'with the b');
  const deep = compileGlob(`${'**a'.repeat(30)}/z`);
  t.notOk(deep.match(`${'a/'.repeat(2000)}y`), '** runs too');
});
