import t from 'tap';
import pino from 'pino';
import type { FilesystemService, FsFileInfo } from '../../../sdk/index.ts';
import { numF3, numN, progressJson } from '../../../core/process/json-write.ts';
import { emptyProgress } from '../../../core/process/parse/progress.ts';
import { nameGlob as globToRegExp, parseParts } from '../../../core/process/list-filter.ts';
import { fromStoredConfig, mergeOnto, normalize, toApiConfig, toStoredConfig } from '../../../core/process/config-model.ts';
import { CleanupRunner, parsePattern } from '../../../core/process/cleanup.ts';
import { literalPrefix } from '../../../core/process/cleanup-index.ts';
import { KeyedLock } from '../../../core/process/keyed-lock.ts';

t.test('number rules N and F3 (reference 2.4)', async (t) => {
  t.same([numN(25), numN(24.97512), numN(0.5), numN(NaN), numN(-0)], ['25', '24.975', '0.500', '0', '0']);
  t.same([numF3(25), numF3(0), numF3(1 / 3), numF3(Infinity)], ['25.000', '0.000', '0.333', '0.000']);
  const p = JSON.parse(progressJson({ ...emptyProgress(), fps: 24.5, speed: 1 }));
  t.same([p.fps, p.speed], [24.5, 1]);
  t.match(progressJson({ ...emptyProgress(), fps: 24.5 }), /"fps":24\.500,/);
});

t.test('list helpers', async (t) => {
  t.same(parseParts(undefined), { config: true, state: true, report: true, metadata: true });
  t.same(parseParts('state,nope'), { config: false, state: true, report: false, metadata: false });
  const cases: [string, string, boolean][] = [
    ['foo_*', 'foo_a/b', true], ['*_bbb_*', 'x_bbb_y', true], ['?x', 'ax', true], ['?x', 'aax', false], ['[ab]c', 'bc', true],
    ['[!ab]c', 'bc', false], ['{a,b}c', 'ac', true], ['{a,b}c', 'cc', false], ['a.b', 'axb', false], ['a\\*', 'a*', true],
  ];
  for (const [glob, s, ok] of cases) t.equal(globToRegExp(glob)!.test(s), ok, `${glob} ~ ${s}`);
  for (const bad of ['[ab', '{a,b', 'a\\']) t.equal(globToRegExp(bad), undefined, `malformed ${bad}`);
});

t.test('config forms: API, stored, merge', async (t) => {
  const c = normalize({ id: ' p ', input: [{ address: 'a' }], output: [{ id: 'o', address: 'b', cleanup: [{ pattern: 'mem:/x' }] }], limits: { memory_mbytes: 3 } });
  t.equal(c.id, 'p', 'the process id is trimmed');
  t.equal(c.input[0]!.id.length, 22, 'an input without id gets one');
  t.same(c.output[0]!.cleanup, [{ pattern: 'mem:/x', max_files: 0, max_file_age_seconds: 0, purge_on_delete: false }]);
  const stored = toStoredConfig(c, '^5.1.9');
  t.equal(stored.limit_memory_bytes, 3 * 1024 * 1024);
  t.same(fromStoredConfig(JSON.parse(JSON.stringify(stored))), c, 'round trip through db.json');
  t.same(toApiConfig(fromStoredConfig({ id: 'old', input: [{ id: 'i', address: 'x' }], output: [{ id: 'o', address: 'y' }] })).type, 'encoder',
    'old stored configs without type read as encoder');
  t.same(mergeOnto({ a: 1, list: [{ id: 'x', o: [1] }, { id: 'y' }], keep: true }, { list: [{ o: [2] }], a: 2 }),
    { a: 2, list: [{ id: 'x', o: [2] }], keep: true });
});

function fakeFs(files: Map<string, number>): FilesystemService {
  const glob = (g: string) => new RegExp(`^${g.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`);
  return {
    name: 'mem', type: 'mem', mount: '/memfs',
    list: async (g) => [...files].filter(([n]) => !g || glob(g).test(n)).map(([name, last_modified]): FsFileInfo => ({ name, size_bytes: 1, last_modified })),
    stat: async () => undefined,
    readFile: async () => undefined,
    writeFile: async () => ({ created: true }),
    deleteFile: async (p) => files.delete(p),
    usage: () => ({ used: 0, limit: 0 }),
  };
}

t.test('cleanup rules (reference 9)', async (t) => {
  t.same(parsePattern('memfs:/a_*.ts'), { fs: 'memfs', glob: '/a_*.ts' });
  t.same(parsePattern('diskfs:/x/**'), { fs: 'diskfs', glob: '/x/**' });
  t.same(parsePattern('archive:/y'), { fs: 'archive', glob: '/y' });
  t.equal(parsePattern('s3name:/y'), undefined, 'only lowercase letters name a filesystem');
  t.equal(parsePattern('/no/prefix'), undefined);

  const now = Math.floor(Date.now() / 1000);
  const files = new Map<string, number>([['/p_9.ts', now], ['/p_10.ts', now], ['/p_8.ts', now - 1], ['/p_7.ts', now - 100], ['/other.ts', now - 100]]);
  const runner = new CleanupRunner(() => [fakeFs(files)], pino({ level: 'silent' }), 60_000);
  t.teardown(() => runner.stop());
  runner.set('p', [{ pattern: 'mem:/p_*.ts', max_files: 2, max_file_age_seconds: 0, purge_on_delete: true }]);
  await runner.tick();
  t.same([...files.keys()].sort(), ['/other.ts', '/p_10.ts', '/p_9.ts'], 'oldest first; same second ordered by number');
  runner.set('q', [{ pattern: 'mem:/other.ts', max_files: 0, max_file_age_seconds: 50, purge_on_delete: false }]);
  await runner.tick();
  t.notOk(files.has('/other.ts'), 'too old');
  await runner.unset('q', true);
  files.set('/other.ts', now - 100);
  await runner.tick();
  t.ok(files.has('/other.ts'), 'no deletion after the rule is gone');
  await runner.unset('p', true);
  t.same([...files.keys()], ['/other.ts'], 'purge_on_delete');
});

t.test('cleanup: one listing per filesystem and tick, rules matched by their literal prefix', async (t) => {
  t.same(['/p_*.ts', '/a/b/**', '**/*.ts', '/x', '/{a,b}.ts', './x*'].map(literalPrefix), ['/p_', '/a/b/', '', '/x', '/', '']);
  const now = Math.floor(Date.now() / 1000);
  const files = new Map<string, number>();
  for (let p = 0; p < 300; p++) for (let i = 0; i < 4; i++) files.set(`/p${p}_${i}.ts`, now - 10 + i);
  files.set('/sub/q_1.ts', now - 100);
  files.set('/keep.m3u8', now - 100);
  const fs = fakeFs(files);
  let lists = 0;
  const counted: FilesystemService = { ...fs, list: (g) => { lists++; return fs.list(g); } };
  const runner = new CleanupRunner(() => [counted], pino({ level: 'silent' }), 60_000);
  t.teardown(() => runner.stop());
  for (let p = 0; p < 300; p++) runner.set(`p${p}`, [{ pattern: `mem:/p${p}_*.ts`, max_files: 2, max_file_age_seconds: 0, purge_on_delete: false }]);
  runner.set('deep', [{ pattern: 'mem:/**/q_*.ts', max_files: 0, max_file_age_seconds: 50, purge_on_delete: false }]);
  await runner.tick();
  t.equal(lists, 1, 'one listing for 301 rules');
  t.same([...files.keys()].filter((n) => n.startsWith('/p7_')).sort(), ['/p7_2.ts', '/p7_3.ts'], 'the newest two kept');
  t.equal([...files.keys()].filter((n) => n.startsWith('/p')).length, 600, 'every rule enforced');
  t.notOk(files.has('/sub/q_1.ts'), 'a glob without a literal prefix still matches');
  t.ok(files.has('/keep.m3u8'), 'files of no rule stay');
});

t.test('keyed lock serialises per key only', async (t) => {
  const lock = new KeyedLock();
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const a = lock.run(['x'], async () => { await gate; order.push('a'); });
  const b = lock.run(['x', 'y'], async () => { order.push('b'); });
  const c = lock.run(['z'], async () => { order.push('c'); });
  await c;
  t.same(order, ['c'], 'another key is not held up');
  release();
  await Promise.all([a, b]);
  t.same(order, ['c', 'a', 'b']);
});
